// SPDX-License-Identifier: MIT
#include "model/open/tracemerger.h"

#include "model/format/counterset.h"
#include "model/import/clockaligner.h"
#include "model/import/traceassembler.h"

#include <limits>
#include <map>
#include <optional>
#include <set>

namespace gapscope::model {
namespace {

// "r<rank>/…" lane keys of annotations follow their rank.
std::string renumberedLaneKey(const std::string& key, const std::map<uint32_t, uint32_t>& ranks)
{
    if (key.size() < 2 || key[0] != 'r')
        return key;
    const size_t slash = key.find('/');
    try {
        auto it = ranks.find(uint32_t(std::stoul(key.substr(1, slash - 1))));
        if (it != ranks.end())
            return "r" + std::to_string(it->second) + (slash == std::string::npos ? "" : key.substr(slash));
    } catch (const std::exception&) { // not a rank: keep the key as it is
    }
    return key;
}

// The part's counters go into `counters` (added up by name and renumbered rank), the rest into `out`.
void mergeHeader(const TraceHeader& part, const std::map<uint32_t, uint32_t>& ranks, TraceHeader& out,
    format::CounterSet<Counter>& counters)
{
    std::set<std::string> hosts;
    for (const auto& h : out.hosts)
        hosts.insert(h.name);
    for (const auto& h : part.hosts)
        if (hosts.insert(h.name).second)
            out.hosts.push_back(h);
    std::set<std::pair<std::string, std::string>> gpus;
    for (const auto& g : out.gpus)
        gpus.insert({ g.host, g.uuid });
    for (const auto& g : part.gpus)
        if (gpus.insert({ g.host, g.uuid }).second)
            out.gpus.push_back(g);
    for (auto r : part.ranks) {
        if (auto it = ranks.find(r.rank); it != ranks.end())
            r.rank = it->second;
        out.ranks.push_back(r);
    }
    for (auto c : part.counters) {
        if (auto it = c.rank >= 0 ? ranks.find(uint32_t(c.rank)) : ranks.end(); it != ranks.end())
            c.rank = int32_t(it->second);
        counters.add(c);
    }
    out.metadata.insert(part.metadata.begin(), part.metadata.end());
}

} // namespace

void TraceMerger::copyEvents(const Trace& part, const std::vector<uint32_t>& rankOf, int64_t offset, TraceBuilder& b)
{
    constexpr StringId kUnmapped = std::numeric_limits<StringId>::max();
    std::vector<StringId> strings(part.stringCount(), kUnmapped);
    auto str = [&](StringId s) {
        if (strings[s] == kUnmapped)
            strings[s] = b.intern(part.str(s));
        return strings[s];
    };
    for (const Lane& lane : part.lanes()) {
        LaneInfo info = lane.info;
        info.rank = rankOf[info.rank];
        const LaneId l = b.lane(info);
        const LaneEvents& ev = lane.events;
        for (size_t i = 0; i < ev.size(); ++i) {
            const TimeNs s = ev.start(i) + offset, d = ev.duration(i);
            switch (part.kindOf(lane.id, i)) {
            case EventKind::Kernel: {
                const KernelConfig* c = part.kernelConfig(lane.id, i);
                b.addKernel(l, s, d, str(ev.name(i)), ev.correlation(i), c ? *c : KernelConfig {});
                break;
            }
            case EventKind::Memcpy:
            case EventKind::Memset:
                b.addMemop(l, s, d, *part.memop(lane.id, i), ev.correlation(i));
                break;
            case EventKind::Api:
                b.addApi(l, s, d, str(ev.name(i)), ev.correlation(i), part.apiKind(lane.id, i));
                break;
            case EventKind::Sync:
                b.addSync(l, s, d, *part.sync(lane.id, i), ev.correlation(i));
                break;
            case EventKind::Nvtx:
                b.addNvtx(l, s, d, str(ev.name(i)), part.nvtxDepth(lane.id, i));
                break;
            case EventKind::Host:
                b.addHost(l, s, d, str(ev.name(i)), part.hostKind(lane.id, i), part.hostDepth(lane.id, i));
                break;
            case EventKind::Collective: {
                CollectiveInfo c = *part.collective(lane.id, i);
                c.datatype = str(c.datatype);
                c.algorithm = str(c.algorithm);
                c.protocol = str(c.protocol);
                b.addCollective(l, s, d, str(ev.name(i)), c);
                break;
            }
            }
        }
    }
}

Trace TraceMerger::merge(std::vector<Trace> parts, const std::vector<std::string>& names)
{
    if (parts.size() == 1)
        return std::move(parts[0]);
    // 1. Ranks, part by part in order.
    std::vector<std::optional<uint32_t>> recorded;
    std::vector<std::pair<size_t, uint32_t>> owner; // (part, rank) of each entry of `recorded`
    for (size_t p = 0; p < parts.size(); ++p)
        for (uint32_t r : parts[p].ranks()) {
            recorded.push_back(r);
            owner.push_back({ p, r });
        }
    const std::vector<uint32_t> assigned = importer::TraceAssembler::assignRanks(recorded);
    std::vector<std::map<uint32_t, uint32_t>> rankMap(parts.size());
    std::vector<std::string> warnings;
    for (size_t i = 0; i < assigned.size(); ++i) {
        const auto [p, r] = owner[i];
        rankMap[p][r] = assigned[i];
        if (assigned[i] != r)
            warnings.push_back(names[p] + ": rank " + std::to_string(r)
                + " is already taken by another file; renumbered to " + std::to_string(assigned[i]));
    }
    // 2. Clocks.
    std::vector<const Trace*> ptrs;
    for (const Trace& t : parts)
        ptrs.push_back(&t);
    importer::ClockAligner::Result clocks = importer::ClockAligner::align(ptrs);
    for (auto& w : clocks.warnings)
        warnings.push_back(std::move(w));
    // 3. Everything else.
    TraceBuilder b;
    TraceHeader& header = b.header();
    format::CounterSet<Counter> counters;
    AnnotationSet all;
    std::optional<BudgetSettings> budget;
    std::optional<ClassifierTable> classifier;
    for (size_t p = 0; p < parts.size(); ++p) {
        Trace& part = parts[p];
        uint32_t top = 0;
        for (const auto& [from, to] : rankMap[p])
            top = std::max(top, from);
        std::vector<uint32_t> rankOf(size_t(top) + 1, 0);
        for (const auto& [from, to] : rankMap[p])
            rankOf[from] = to;
        const int64_t offset = clocks.offsets[p];
        copyEvents(part, rankOf, offset, b);
        for (const auto& [from, to] : rankMap[p])
            for (Step st : part.steps(from)) {
                st.start += offset;
                st.end += offset;
                b.addStep(to, st);
            }
        if (p == 0) {
            header = part.header();
            header.ranks.clear();
            header.counters.clear();
            header.hosts.clear();
            header.gpus.clear();
            header.metadata.clear();
        }
        mergeHeader(part.header(), rankMap[p], header, counters);
        for (Annotation a : part.annotations().notes) {
            a.startNs += offset;
            a.endNs += offset;
            a.laneKey = renumberedLaneKey(a.laneKey, rankMap[p]);
            all.notes.push_back(std::move(a));
        }
        const std::string& rule = part.annotations().stepRule; // the first part's rule (as its budget)
        if (all.stepRule.empty())
            all.stepRule = rule;
        else if (!rule.empty() && rule != all.stepRule)
            warnings.push_back("annotations: " + names[p] + " names step rule '" + rule + "', not '" + all.stepRule
                + "' as an earlier part: '" + all.stepRule + "' is used");
        if (!budget && part.budgetSettings())
            budget = part.budgetSettings();
        if (!classifier && part.classifierTable())
            classifier = part.classifierTable();
        for (const auto& w : part.warnings())
            b.addWarning(w);
        parts[p] = Trace(); // free the part before the next one is copied
    }
    header.counters = counters.inOrderAdded();
    for (auto& w : warnings)
        b.addWarning(std::move(w));
    if (!all.empty())
        b.setAnnotations(std::move(all));
    if (budget)
        b.setBudgetSettings(std::move(*budget));
    if (classifier)
        b.setClassifierTable(std::move(*classifier));
    return b.finish();
}

} // namespace gapscope::model
