// SPDX-License-Identifier: MIT
#include "model/synth/synthgenerator.h"

#include <algorithm>
#include <cmath>

#ifndef GAPSCOPE_VERSION
#define GAPSCOPE_VERSION "0"
#endif

namespace gapscope::model::synth {
namespace {

uint64_t splitmix(uint64_t& x)
{
    uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

constexpr uint64_t kStream = 7;
constexpr uint64_t kGraphMain = 11, kGraphSecond = 12;
constexpr uint64_t kCollectiveBytes = 12288; // batch 1 x hidden 6144 x bf16
constexpr uint64_t kComm = 0x5eed0c0117ec71ull;

} // namespace

Rng::Rng(uint64_t seed)
{
    for (auto& s : m_s)
        s = splitmix(seed);
}

uint64_t Rng::next()
{
    const uint64_t result = rotl(m_s[1] * 5, 7) * 9;
    const uint64_t t = m_s[1] << 17;
    m_s[2] ^= m_s[0];
    m_s[3] ^= m_s[1];
    m_s[1] ^= m_s[2];
    m_s[0] ^= m_s[3];
    m_s[2] ^= t;
    m_s[3] = rotl(m_s[3], 45);
    return result;
}

double Rng::uniform()
{
    return double(next() >> 11) * 0x1.0p-53;
}

double Rng::normal()
{
    if (m_hasSpare) {
        m_hasSpare = false;
        return m_spare;
    }
    double u = 0;
    while (u <= 1e-300)
        u = uniform();
    const double r = std::sqrt(-2.0 * std::log(u)), a = 6.283185307179586 * uniform();
    m_spare = r * std::sin(a);
    m_hasSpare = true;
    return r * std::cos(a);
}

SynthGenerator::SynthGenerator(const SynthOptions& options, SynthSink& sink, json::Value* truth)
    : m_o(options)
    , m_sink(sink)
    , m_truth(truth)
    , m_shared(options.seed ^ 0xC011EC7117Eull)
{
}

int SynthGenerator::classIndex(const char* cls)
{
    auto it = std::find(m_classes.begin(), m_classes.end(), cls);
    if (it != m_classes.end())
        return int(it - m_classes.begin());
    m_classes.emplace_back(cls);
    return int(m_classes.size() - 1);
}

TimeNs SynthGenerator::jittered(Rank& r, double micros, double sigma)
{
    const double f = std::clamp(1.0 + sigma * r.rng.normal(), 0.5, 2.0);
    return std::max<TimeNs>(1, us(micros * f));
}

void SynthGenerator::setupLanes()
{
    m_seq = stepSequence(m_o.kernelsPerStep);
    std::map<const KernelTemplate*, uint32_t> configs;
    for (const KernelTemplate* t : m_seq) {
        m_nameIds.push_back(m_sink.string(t->name));
        auto it = configs.find(t);
        if (it == configs.end()) {
            KernelConfig c;
            std::copy(t->grid, t->grid + 3, c.grid);
            std::copy(t->block, t->block + 3, c.block);
            c.registers = t->registers;
            c.sharedDynamic = t->sharedBytes;
            it = configs.emplace(t, m_sink.launchConfig(c)).first;
        }
        m_configIds.push_back(it->second);
        m_seqClass.push_back(classIndex(t->cls));
        if (t->collective && !m_opIds.count(t->collective))
            m_opIds[t->collective] = m_sink.string(t->collective);
    }
    m_strStep = m_sink.string("decode step");
    m_strGraphLaunch = m_sink.string("cudaGraphLaunch");
    m_strLaunch = m_sink.string("cudaLaunchKernel");
    m_strSync = m_sink.string("cudaStreamSynchronize");
    m_strMemcpy = m_sink.string("cudaMemcpyAsync");
    m_strBf16 = m_sink.string("bf16");
    m_strRing = m_sink.string("Ring");
    m_strLL = m_sink.string("LL");
    if (m_o.hostOps) {
        m_strForward = m_sink.string("model.forward");
        m_strReplay = m_sink.string("CUDAGraph::replay");
        m_strHostDelay = m_sink.string("synth::host_delay");
        for (size_t k = 0; k < m_seq.size(); ++k)
            if (!m_opNames.count(m_seqClass[k]))
                m_opNames[m_seqClass[k]] = m_sink.string(std::string("aten::") + m_seq[k]->cls);
    }
    m_ranks.resize(m_o.ranks);
    for (uint32_t i = 0; i < m_o.ranks; ++i) {
        Rank& r = m_ranks[i];
        r.rank = m_o.firstRank + i;
        r.rng = Rng(m_o.seed * 0x9E3779B97F4A7C15ull + i + 1);
        r.speed = std::clamp(1.0 + 0.005 * r.rng.normal(), 0.98, 1.02);
        const uint64_t tid = 81000 + 17 * i;
        const uint32_t pid = 4100 + i;
        const std::string& host = m_o.host;
        const uint32_t rank = r.rank;
        r.gpuLane = m_sink.lane({ LaneKind::GpuStream, rank, host, i % 8, kStream, "stream 7", pid });
        r.apiLane = m_sink.lane(
            { LaneKind::CpuApi, rank, host, i % 8, tid, "thread " + std::to_string(tid) + " (python)", pid });
        r.nvtxLane = m_sink.lane({ LaneKind::Nvtx, rank, host, i % 8, tid, "nvtx " + std::to_string(tid), pid });
        r.collLane = m_sink.lane({ LaneKind::Collective, rank, host, i % 8, 0, "nccl", pid });
        if (m_o.hostOps)
            r.cpuLane = m_sink.lane(
                { LaneKind::CpuThread, rank, host, i % 8, tid, "thread " + std::to_string(tid) + " (python) CPU", pid });
        r.host = m_o.startNs + TimeNs(i) * 1300;
    }
}

void SynthGenerator::api(Rank& r, TimeNs start, TimeNs dur, uint32_t name, const char* text, uint32_t corr)
{
    m_sink.api(r.apiLane, start, dur, name, corr);
    if (m_truth && m_o.hostOps)
        r.hostSpans.push_back({ start, start + dur, text, "cuda_runtime" });
}

void SynthGenerator::hostOp(
    Rank& r, TimeNs start, TimeNs dur, uint32_t name, const std::string& text, HostKind kind, uint32_t depth)
{
    m_sink.host(r.cpuLane, start, dur, name, kind, depth);
    if (m_truth)
        r.hostSpans.push_back({ start, start + dur, text, toString(kind) });
}

void SynthGenerator::launchGraph(Rank& r, uint64_t graphId)
{
    const TimeNs opStart = r.host;
    if (m_o.hostOps)
        r.host += jittered(r, 0.6, 0.1);
    const TimeNs dur = jittered(r, 12.0, 0.05);
    r.launchCorr = r.corr++;
    api(r, r.host, dur, m_strGraphLaunch, "cudaGraphLaunch", r.launchCorr);
    r.launch = { r.host, r.host + dur };
    r.ready = r.host + jittered(r, 6.0, 0.05);
    r.host += dur;
    r.graph = graphId;
    if (m_o.hostOps) {
        r.host += jittered(r, 0.5, 0.1);
        hostOp(r, opStart, r.host - opStart, m_strReplay, "CUDAGraph::replay", HostKind::CpuOp, 1);
    }
}

void SynthGenerator::beginStep(Rank& r, uint32_t step)
{
    r.nvtxStart = r.host;
    const double gapUs = step == 0 ? 20.0 : m_o.hostGapUs;
    r.host += jittered(r, gapUs, 0.05) + (step == 0 ? 0 : us(m_o.extraHostGapUs));
    r.forwardStart = r.host;
    r.stepStarted = false;
    if (m_o.graphMode)
        launchGraph(r, kGraphMain);
}

TimeNs SynthGenerator::startOf(Rank& r, size_t k)
{
    const TimeNs gap = jittered(r, m_o.graphMode ? 0.7 : 1.1, 0.08);
    if (!m_o.graphMode) {
        const TimeNs opStart = r.host;
        if (m_o.hostOps)
            r.host += jittered(r, 0.6, 0.1);
        const TimeNs dur = jittered(r, 4.0, 0.05);
        r.launchCorr = r.corr++;
        api(r, r.host, dur, m_strLaunch, "cudaLaunchKernel", r.launchCorr);
        r.launch = { r.host, r.host + dur };
        r.ready = r.host + jittered(r, 2.5, 0.05);
        if (m_o.hostOps) {
            r.host += dur + jittered(r, 0.5, 0.1);
            const int cls = m_seqClass[k];
            hostOp(r, opStart, r.host - opStart, m_opNames[cls], "aten::" + m_classes[size_t(cls)], HostKind::CpuOp, 1);
            r.host += jittered(r, 2.5, 0.10);
        } else {
            r.host += dur + jittered(r, 3.0, 0.10);
        }
    }
    TimeNs start = std::max(r.gpu + gap, r.ready);
    if (m_o.launchGapEvery && (k + 1) % m_o.launchGapEvery == 0)
        start += us(m_o.launchGapUs);
    return start;
}

void SynthGenerator::kernel(Rank& r, size_t k, const KernelTemplate& t, TimeNs start, TimeNs dur, TimeNs wait)
{
    (void)t;
    const bool graph = m_o.graphMode;
    m_sink.kernel(r.gpuLane, start, dur, m_nameIds[k], r.launchCorr, m_configIds[k], graph ? r.graph : 0,
        graph ? r.graph * 100000 + k + 1 : 0);
    if (!r.stepStarted) {
        r.stepStarted = true;
        if (m_truth && !r.segments.empty())
            closeTruth(r, uint32_t(r.truthSteps.size()), start);
        r.stepStart = start;
    }
    r.gpu = start + dur;
    if (m_truth)
        r.segments.push_back({ start, start + dur, wait, m_seqClass[k], r.launch.start });
    if (m_truth)
        r.stepLaunches.push_back(r.launch);
}

void SynthGenerator::collective(size_t k, const KernelTemplate& t)
{
    std::vector<TimeNs> starts(m_ranks.size());
    TimeNs latest = INT64_MIN;
    for (size_t i = 0; i < m_ranks.size(); ++i) {
        starts[i] = startOf(m_ranks[i], k);
        latest = std::max(latest, starts[i]);
    }
    const double f = std::clamp(1.0 + m_o.jitter * m_shared.normal(), 0.5, 2.0);
    const TimeNs end = latest + std::max<TimeNs>(1, us(t.us * f));
    for (size_t i = 0; i < m_ranks.size(); ++i) {
        Rank& r = m_ranks[i];
        kernel(r, k, t, starts[i], end - starts[i], latest - starts[i]);
        CollectiveInfo c;
        c.bytes = kCollectiveBytes;
        c.datatype = m_strBf16;
        c.algorithm = m_strRing;
        c.protocol = m_strLL;
        c.sequence = ++r.sequence;
        c.comm = kComm;
        c.channels = 2;
        m_sink.collective(r.collLane, starts[i], end - starts[i], m_opIds[t.collective], c);
        if (int32_t(i) == m_o.stragglerRank && starts[i] == latest)
            ++r.lateCollectives;
    }
}

void SynthGenerator::syncStall(Rank& r)
{
    // A blocking read of a small device result: copy, then the host waits in a sync while the GPU idles.
    const TimeNs apiStart = r.host + us(1.0), apiDur = jittered(r, 4.5, 0.05);
    const uint32_t corr = r.corr++;
    api(r, apiStart, apiDur, m_strMemcpy, "cudaMemcpyAsync", corr);
    const TimeNs mStart = std::max(r.gpu + jittered(r, 0.7, 0.08), apiStart + us(3.0));
    const TimeNs mDur = jittered(r, 2.2, 0.03);
    m_sink.memcpy(r.gpuLane, mStart, mDur, CopyKind::DtoH, 4096, corr);
    if (m_truth) {
        r.segments.push_back({ mStart, mStart + mDur, 0, -1, apiStart });
        r.stepLaunches.push_back({ apiStart, apiStart + apiDur });
    }
    r.gpu = mStart + mDur;
    // The host blocks once its queue has reached the copy, so only the injected idle overlaps the sync.
    const TimeNs sStart = std::max(apiStart + apiDur + us(0.5), mStart + us(0.3));
    const TimeNs sEnd = std::max(sStart + us(1.0), r.gpu + us(m_o.syncStallUs));
    const uint32_t scorr = r.corr++;
    api(r, sStart, sEnd - sStart, m_strSync, "cudaStreamSynchronize", scorr);
    m_sink.sync(r.apiLane, sStart, sEnd - sStart, SyncKind::Stream, kStream, scorr);
    r.syncs.emplace_back(sStart, sEnd);
    r.host = sEnd + jittered(r, 1.5, 0.05);
    if (m_o.graphMode)
        launchGraph(r, kGraphSecond);
}

void SynthGenerator::endStep(Rank& r, uint32_t step)
{
    const TimeNs lastEnd = r.gpu;
    const TimeNs lastStart = m_truth && !r.segments.empty() ? r.segments.back().start : lastEnd - 1;
    // The host reads the sampled token: it syncs once the step's last kernel runs, never earlier
    // (an overlap scheduler prepares the next batch meanwhile), so only injected stalls are syncs.
    const TimeNs sStart = std::max(r.host, std::min(lastEnd - 1, lastStart + us(0.5)));
    const TimeNs sEnd = lastEnd + jittered(r, 2.0, 0.05);
    if (m_o.hostOps) // the step's Python frame: from its first launch to its last
        hostOp(r, r.forwardStart, r.host - r.forwardStart, m_strForward, "model.forward", HostKind::Python, 0);
    const uint32_t corr = r.corr++;
    api(r, sStart, sEnd - sStart, m_strSync, "cudaStreamSynchronize", corr);
    m_sink.sync(r.apiLane, sStart, sEnd - sStart, SyncKind::Stream, kStream, corr);
    r.syncs.emplace_back(sStart, sEnd);
    r.host = sEnd + jittered(r, 0.8, 0.05);
    m_sink.nvtx(r.nvtxLane, r.nvtxStart, r.host - r.nvtxStart, m_strStep, 0);
    Step stored { step, r.stepStart, lastEnd, StepSource::File };
    stored.kind = StepKind::Decode; // what the step's NVTX range says, stored so that an overview has it too
    stored.label = "decode step";
    m_sink.step(r.rank, stored);
}

// Applies the gap-analysis rules to one step of one rank (one stream: no concurrency).
void SynthGenerator::closeTruth(Rank& r, uint32_t step, TimeNs windowEnd)
{
    if (r.segments.empty())
        return;
    std::vector<TimeNs> cls(m_classes.size(), 0);
    TimeNs wait = 0, memops = 0, launchHost = 0, syncStall = 0, inGraph = 0;
    const auto& seg = r.segments;
    for (size_t j = 0; j < seg.size(); ++j) {
        const TimeNs busy = seg[j].end - seg[j].start;
        if (seg[j].cls < 0)
            memops += busy;
        else
            cls[size_t(seg[j].cls)] += busy - seg[j].wait;
        wait += seg[j].wait;
        if (j == 0 || seg[j].start <= seg[j - 1].end)
            continue;
        const TimeNs a = seg[j - 1].end, b = seg[j].start;
        if (sameGraphLaunch(seg[j - 1], seg[j])) { // queued whole: neither the host nor a sync held it up
            inGraph += b - a;
            continue;
        }
        TimeNs inSync = 0;
        for (const auto& [s0, s1] : r.syncs)
            inSync += std::max<TimeNs>(0, std::min(b, s1) - std::max(a, s0));
        syncStall += inSync;
        launchHost += (b - a) - inSync;
    }
    json::Value host = m_o.hostOps ? hostTruth(r) : json::Value();
    const TimeNs measured = windowEnd - seg.front().start;
    const TimeNs stepGap = windowEnd - seg.back().end;
    json::Value st = json::Value::object();
    st.set("index", step);
    st.set("measured_ns", measured);
    st.set("launch_host_ns", launchHost);
    st.set("sync_stall_ns", syncStall);
    st.set("in_graph_ns", inGraph);
    st.set("step_gap_ns", stepGap);
    st.set("collective_wait_ns", wait);
    st.set("memory_ops_ns", memops);
    json::Value comps = json::Value::object();
    for (size_t c = 0; c < m_classes.size(); ++c)
        comps.set(m_classes[c], cls[c]);
    st.set("components_ns", std::move(comps));
    if (m_o.hostOps)
        st.set("host", std::move(host));
    r.truthSteps.push(std::move(st));
    r.segments.clear();
    r.stepLaunches.clear();
    // Host events that ended before this window's end take no part in later steps' gaps.
    r.hostSpans.erase(std::remove_if(r.hostSpans.begin(), r.hostSpans.end(),
                          [windowEnd](const HostSpan& h) { return h.end <= windowEnd; }),
        r.hostSpans.end());
    // Syncs that ended before this window's end cannot touch later steps.
    r.syncs.erase(std::remove_if(r.syncs.begin(), r.syncs.end(),
                      [windowEnd](const std::pair<TimeNs, TimeNs>& s) { return s.second <= windowEnd; }),
        r.syncs.end());
}

// The host attribution of one step's launch/host gaps (the gap rules of closeTruth; a gap that
// overlaps a host sync keeps only its launch/host part [a, max(a, s0))).
// Two kernels of one graph launch, one after the other on the stream: the gap between them is an
// in-graph gap (the analysis's rule: the same launching call).
bool SynthGenerator::sameGraphLaunch(const Segment& before, const Segment& after) const
{
    return m_o.graphMode && before.cls >= 0 && after.cls >= 0 && before.launch == after.launch;
}

json::Value SynthGenerator::hostTruth(const Rank& r) const
{
    const auto& seg = r.segments;
    // Events that enclose every launch of the step are the step's own (several launching calls only).
    const Call first = r.stepLaunches.front(), last = r.stepLaunches.back();
    const bool several = first.start != last.start;
    std::vector<const HostSpan*> spans;
    for (const HostSpan& h : r.hostSpans)
        if (!(several && h.start <= first.start && h.end >= last.end))
            spans.push_back(&h);
    SynthHostTruth truth;
    for (size_t j = 1; j < seg.size(); ++j) {
        TimeNs a = seg[j - 1].end, b = seg[j].start;
        if (b <= a || sameGraphLaunch(seg[j - 1], seg[j]))
            continue;
        for (const auto& [s0, s1] : r.syncs) { // the first sync still running at a decides
            if (s1 <= a)
                continue;
            if (s0 < b && seg[j].launch >= std::max(a, s0))
                b = std::max(a, s0);
            break;
        }
        truth.addGap(spans, a, b);
    }
    return truth.toJson();
}

Status SynthGenerator::run()
{
    if (Status s = validate(m_o); !s)
        return s;
    setupLanes();
    const size_t stallAt = m_seq.size() / 2, hostDelayAt = m_seq.size() / 4;
    for (uint32_t step = 0; step < m_o.steps; ++step) {
        for (Rank& r : m_ranks)
            beginStep(r, step);
        for (size_t k = 0; k < m_seq.size(); ++k) {
            const KernelTemplate& t = *m_seq[k];
            if (m_o.syncStallUs > 0 && k == stallAt)
                for (Rank& r : m_ranks)
                    syncStall(r);
            if (m_o.hostOpUs > 0 && k == hostDelayAt)
                for (Rank& r : m_ranks) {
                    const TimeNs d = us(m_o.hostOpUs);
                    hostOp(r, r.host, d, m_strHostDelay, "synth::host_delay", HostKind::CpuOp, 1);
                    r.host += d;
                }
            if (t.collective) {
                collective(k, t);
                continue;
            }
            const bool slow = !m_o.slowClass.empty() && m_o.slowClass == t.cls;
            const bool beforeCollective = k + 1 < m_seq.size() && m_seq[k + 1]->collective;
            for (Rank& r : m_ranks) {
                const TimeNs start = startOf(r, k);
                TimeNs dur = jittered(r, t.us * r.speed * (slow ? m_o.slowFactor : 1.0), m_o.jitter);
                if (beforeCollective && int32_t(r.rank) == m_o.stragglerRank)
                    dur += us(m_o.stragglerDelayUs);
                kernel(r, k, t, start, dur, 0);
            }
        }
        for (Rank& r : m_ranks)
            endStep(r, step);
        if (Status s = m_sink.flush(); !s)
            return s;
    }
    if (m_truth) {
        for (Rank& r : m_ranks)
            closeTruth(r, uint32_t(r.truthSteps.size()), r.gpu);
        writeTruth();
    }
    return Status::ok();
}

void SynthGenerator::writeTruth()
{
    json::Value ranks = json::Value::array();
    json::Value stragglers = json::Value::array();
    for (Rank& r : m_ranks) {
        json::Value o = json::Value::object();
        o.set("rank", r.rank);
        o.set("steps", std::move(r.truthSteps));
        ranks.push(std::move(o));
        if (int32_t(r.rank) == m_o.stragglerRank && m_o.stragglerDelayUs > 0) {
            json::Value s = json::Value::object();
            s.set("rank", r.rank);
            s.set("delay_ns", us(m_o.stragglerDelayUs));
            s.set("collectives", r.lateCollectives);
            stragglers.push(std::move(s));
        }
    }
    json::Value classes = json::Value::object();
    for (const KernelTemplate& t : allTemplates())
        classes.set(t.name, t.cls);
    json::Value doc = json::Value::object();
    doc.set("ranks", std::move(ranks));
    doc.set("stragglers", std::move(stragglers));
    doc.set("injected", optionsJson(m_o));
    doc.set("kernel_classes", std::move(classes));
    doc.set("classifier", "default (resources/classifier/default.json)");
    *m_truth = std::move(doc);
}

json::Value SynthGenerator::optionsJson(const SynthOptions& o)
{
    json::Value v = json::Value::object();
    v.set("ranks", o.ranks);
    v.set("steps", o.steps);
    v.set("kernels_per_step", o.kernelsPerStep);
    v.set("seed", (unsigned long long)o.seed);
    v.set("mode", o.graphMode ? "graph" : "eager");
    v.set("jitter", o.jitter);
    v.set("host_gap_us", o.hostGapUs);
    v.set("extra_host_gap_us", o.extraHostGapUs);
    v.set("launch_gap_us", o.launchGapUs);
    v.set("launch_gap_every", o.launchGapEvery);
    v.set("sync_stall_us", o.syncStallUs);
    v.set("straggler_rank", o.stragglerRank);
    v.set("straggler_delay_us", o.stragglerDelayUs);
    v.set("slow_class", o.slowClass);
    v.set("slow_factor", o.slowFactor);
    if (o.host != SynthOptions().host || o.firstRank != 0) { // a share of a multi-host job
        v.set("host", o.host);
        v.set("first_rank", o.firstRank);
    }
    if (o.hostOps) // only when set: files written without them keep their header
        v.set("host_ops", true);
    if (o.hostOpUs > 0)
        v.set("host_op_us", o.hostOpUs);
    return v;
}

TraceHeader SynthGenerator::header(const SynthOptions& o)
{
    TraceHeader h;
    h.source = "synth";
    h.toolVersion = GAPSCOPE_VERSION;
    h.clockDomain = "CLOCK_REALTIME";
    h.createdUnixNs = o.startNs;
    h.hasCapture = true;
    CaptureSettings& cap = h.capture;
    cap.steps = o.steps;
    cap.stepRule = "file";
    cap.kernels = true;
    cap.runtimeApi = true;
    cap.synchronization = true;
    cap.nvtx = true;
    cap.nccl = true;
    HostClock& host = h.hosts.emplace_back();
    host.name = o.host;
    host.clockOffsetMethod = "none";
    for (uint32_t i = 0; i < o.ranks; ++i) {
        GpuInfo& g = h.gpus.emplace_back();
        g.uuid = "GPU-5e7d0000-0000-4000-8000-" + std::to_string(100000000000ull + o.firstRank + i);
        g.name = "NVIDIA H200 (synthetic)";
        g.host = o.host;
        g.deviceIndex = i % 8;
        g.smCount = 132;
        g.memoryBytes = 150754820096ull;
        g.smClockMhz = 1980;
        g.memoryClockMhz = 3201;
        g.ccMajor = 9;
        g.peakMemoryBandwidthGbs = 4800;
        RankInfo& rk = h.ranks.emplace_back();
        rk.rank = o.firstRank + i;
        rk.worldSize = o.firstRank + o.ranks;
        rk.pid = 4100 + i;
        rk.host = o.host;
        rk.gpuUuid = g.uuid;
        rk.deviceIndex = i % 8;
        rk.processName = "synth";
    }
    json::Value opts = optionsJson(o);
    for (const auto& [k, v] : opts.members())
        h.metadata["synth." + k] = json::write(v, -1);
    return h;
}

} // namespace gapscope::model::synth
