// SPDX-License-Identifier: MIT
#include "randomtrace.h"

#include "model/format/serialize.h"
#include "model/io/tracemetaproto.h"

#include <random>

namespace gapscope::test {

using namespace model;

namespace {

std::string nameFor(std::mt19937_64& rng, int i)
{
    static const char* stems[] = { "void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*)",
        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "fused_moe_kernel",
        "nvjet_tst_64x8_64x16_4x1_v_bz_splitK_TNT", "kernel \xc3\xa9\xe2\x82\xac \"quoted\" \\ back", "" };
    std::string s = stems[i % 6];
    if (s.empty())
        s = std::string(3000 + size_t(rng() % 1000), 'x') + "<template>"; // very long
    return s + "#" + std::to_string(rng() % 7);
}

} // namespace

Trace randomTrace(const RandomTraceOptions& o)
{
    std::mt19937_64 rng(o.seed);
    TraceBuilder b;
    TraceHeader& h = b.header();
    h.source = "test";
    h.clockDomain = "CLOCK_REALTIME";
    h.counters.push_back(Counter { "cupti_dropped_records", 1, 17, "data_loss", "" });
    std::vector<StringId> names;
    for (int i = 0; i < 24; ++i)
        names.push_back(b.intern(nameFor(rng, i)));
    const TimeNs base = 1764460800000000000 + TimeNs(rng() % 1000000);
    for (uint32_t r = 0; r < o.ranks; ++r) {
        RankInfo& ri = h.ranks.emplace_back();
        ri.rank = r;
        ri.pid = 100 + r;
        LaneId gpu = b.lane({ LaneKind::GpuStream, r, "host", r, 7, "", 100 + r });
        LaneId gpu2 = b.lane({ LaneKind::GpuStream, r, "host", r, 13, "copy", 100 + r });
        LaneId api = b.lane({ LaneKind::CpuApi, r, "host", r, 4242, "main", 100 + r });
        LaneId nvtx = b.lane({ LaneKind::Nvtx, r, "host", r, 4242, "", 100 + r });
        LaneId coll = b.lane({ LaneKind::Collective, r, "host", r, 0, "nccl", 100 + r });
        TimeNs t = base;
        for (uint32_t i = 0; i < o.eventsPerLane; ++i) {
            const TimeNs dur = (rng() % 50 == 0) ? TimeNs(5000000000ll + TimeNs(rng() % 1000)) : TimeNs(rng() % 20000);
            const uint32_t corr = 1 + i;
            KernelConfig kc;
            kc.grid[0] = uint32_t(1 + rng() % 4);
            kc.block[0] = 128;
            kc.registers = 32;
            kc.sharedDynamic = uint32_t(rng() % 3) * 1024;
            kc.graphId = (i % 3 == 0) ? 11 : 0;
            kc.graphNodeId = kc.graphId ? 1000 + i : 0;
            b.addApi(api, t, 3000 + TimeNs(rng() % 100), names[rng() % 4], corr,
                i % 5 == 0 ? ApiKind::Driver : ApiKind::Runtime);
            if (i % 10 == 9)
                b.addMemop(gpu, t + 4000, dur % 9000,
                    MemopInfo {
                        i % 20 == 19 ? MemopKind::Memset : MemopKind::Memcpy, CopyKind::DtoH, 4096 + i, i % 2 == 0 },
                    corr);
            else
                b.addKernel(gpu, t + 4000, dur, names[rng() % names.size()], corr, kc);
            if (i % 7 == 0)
                b.addKernel(gpu2, t + 4000, TimeNs(rng() % 3000), names[1], corr, kc); // equal starts on lanes
            if (i % 4 == 0)
                b.addSync(api, t + 3500, 200 + TimeNs(rng() % 50), SyncInfo { SyncKind::Stream, 7 }, corr + 100000);
            if (i % 8 == 0) {
                b.addNvtx(nvtx, t, 60000, names[5], 0);
                b.addNvtx(nvtx, t, 20000, names[6], 1); // same start, shorter: nested
                b.addNvtx(nvtx, t + 25000, 1000, names[7], 1);
            }
            if (i % 6 == 0) {
                CollectiveInfo ci { 12288, names[8], names[9], names[10], i, 0xabcdef, 2, 0 };
                b.addCollective(coll, t + 5000, TimeNs(rng() % 30000), names[2], ci);
            }
            t += 10000 + TimeNs(rng() % 5000) - (i % 13 == 0 ? 12000 : 0); // sometimes out of order
        }
        for (uint32_t s = 0; s < 5; ++s)
            b.addStep(r, Step { s, base + TimeNs(s) * 1000000, base + TimeNs(s) * 1000000 + 900000, StepSource::File });
    }
    if (o.sections) {
        Annotation an;
        an.id = 1;
        an.startNs = base;
        an.endNs = base + 5000;
        an.laneKey = "r0/gpu/d0/7";
        an.text = "slow all-reduce \xe2\x9c\x93";
        AnnotationSet set;
        set.notes.push_back(an);
        b.setAnnotations(set);
        BudgetSettings bs;
        bs.model = "glm-5";
        bs.tp = 8;
        b.setBudgetSettings(bs);
        ClassifierTable ct;
        ct.rules.push_back(ClassifierRule { "nccl", "collectives" });
        b.setClassifierTable(ct);
    }
    return b.finish();
}

namespace {

std::string eventDiff(const Trace& a, LaneId la, const Trace& b, LaneId lb, size_t i)
{
    const LaneEvents& x = a.lane(la).events;
    const LaneEvents& y = b.lane(lb).events;
    auto at = [&](const std::string& what) {
        return "lane " + a.lane(la).info.key() + " event " + std::to_string(i) + ": " + what;
    };
    if (x.start(i) != y.start(i) || x.duration(i) != y.duration(i))
        return at("time " + std::to_string(x.start(i)) + "+" + std::to_string(x.duration(i)) + " vs "
            + std::to_string(y.start(i)) + "+" + std::to_string(y.duration(i)));
    if (a.str(x.name(i)) != b.str(y.name(i)))
        return at("name differs");
    if (x.correlation(i) != y.correlation(i))
        return at("correlation differs");
    if (a.kindOf(la, i) != b.kindOf(lb, i))
        return at("kind differs");
    const KernelConfig *ka = a.kernelConfig(la, i), *kb = b.kernelConfig(lb, i);
    if ((ka == nullptr) != (kb == nullptr) || (ka && !(*ka == *kb)))
        return at("launch config differs");
    const MemopInfo *ma = a.memop(la, i), *mb = b.memop(lb, i);
    if ((ma == nullptr) != (mb == nullptr)
        || (ma
            && (ma->kind != mb->kind || ma->copyKind != mb->copyKind || ma->bytes != mb->bytes
                || ma->async != mb->async)))
        return at("memop differs");
    const SyncInfo *sa = a.sync(la, i), *sb = b.sync(lb, i);
    if ((sa == nullptr) != (sb == nullptr) || (sa && (sa->kind != sb->kind || sa->stream != sb->stream)))
        return at("sync differs");
    const CollectiveInfo *ca = a.collective(la, i), *cb = b.collective(lb, i);
    if ((ca == nullptr) != (cb == nullptr)
        || (ca
            && (ca->bytes != cb->bytes || ca->sequence != cb->sequence || ca->comm != cb->comm
                || ca->channels != cb->channels || ca->root != cb->root || a.str(ca->datatype) != b.str(cb->datatype)
                || a.str(ca->algorithm) != b.str(cb->algorithm) || a.str(ca->protocol) != b.str(cb->protocol))))
        return at("collective differs");
    if (a.nvtxDepth(la, i) != b.nvtxDepth(lb, i) || a.apiKind(la, i) != b.apiKind(lb, i))
        return at("nvtx depth / api kind differs");
    return {};
}

} // namespace

std::string compareTraces(const Trace& a, const Trace& b, bool ignoreHeaderTimes)
{
    if (a.laneCount() != b.laneCount())
        return "lane count " + std::to_string(a.laneCount()) + " vs " + std::to_string(b.laneCount());
    for (const Lane& la : a.lanes()) {
        auto lb = b.findLane(la.info.key());
        if (!lb)
            return "lane " + la.info.key() + " missing";
        const Lane& l2 = b.lane(*lb);
        if (la.info.name != l2.info.name || la.info.host != l2.info.host || la.info.pid != l2.info.pid)
            return "lane " + la.info.key() + ": info differs";
        if (la.events.size() != l2.events.size())
            return "lane " + la.info.key() + ": " + std::to_string(la.events.size()) + " vs "
                + std::to_string(l2.events.size()) + " events";
        for (size_t i = 0; i < la.events.size(); ++i)
            if (std::string d = eventDiff(a, la.id, b, *lb, i); !d.empty())
                return d;
    }
    for (uint32_t r : a.ranks()) {
        const auto &sa = a.steps(r), &sb = b.steps(r);
        if (sa.size() != sb.size())
            return "rank " + std::to_string(r) + ": step count differs";
        for (size_t i = 0; i < sa.size(); ++i)
            if (sa[i].index != sb[i].index || sa[i].start != sb[i].start || sa[i].end != sb[i].end
                || sa[i].source != sb[i].source || sa[i].kind != sb[i].kind || sa[i].batch != sb[i].batch
                || sa[i].tokens != sb[i].tokens || sa[i].label != sb[i].label)
                return "rank " + std::to_string(r) + ": step " + std::to_string(i) + " differs";
    }
    pb::FileHeader ha = toProto(a.header()), hb = toProto(b.header());
    if (ignoreHeaderTimes) {
        for (pb::FileHeader* h : { &ha, &hb }) {
            h->clear_start_ns();
            h->clear_end_ns();
            h->clear_tool_version();
        }
    }
    if (format::serializeDeterministic(ha) != format::serializeDeterministic(hb))
        return "header differs:\n" + ha.DebugString() + "\nvs\n" + hb.DebugString();
    if (!(a.annotations() == b.annotations()))
        return "annotations differ";
    if (a.budgetSettings().has_value() != b.budgetSettings().has_value()
        || (a.budgetSettings() && !(*a.budgetSettings() == *b.budgetSettings())))
        return "budget settings differ";
    if (a.classifierTable().has_value() != b.classifierTable().has_value()
        || (a.classifierTable()
            && toProto(*a.classifierTable()).SerializeAsString() != toProto(*b.classifierTable()).SerializeAsString()))
        return "classifier table differs";
    if (a.eventCount() != b.eventCount())
        return "event count differs";
    return {};
}

} // namespace gapscope::test
