// SPDX-License-Identifier: MIT
#include "model/export/perfettoexport.h"

#include "model/analysis/gapanalyzer.h"
#include "model/base/taskpool.h"
#include "model/export/exportrules.h"
#include "model/format/perfettoencoder.h"
#include "model/format/zstdcodec.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

namespace gapscope::model {
namespace {

using format::PerfettoEncoder;
using EventType = PerfettoEncoder::EventType;

// Track uuids: one range per kind of track.
constexpr uint64_t kRankTrack = 1ull << 32;
constexpr uint64_t kLaneTrack = 2ull << 32;
constexpr uint64_t kStepTrack = 3ull << 32;
constexpr uint64_t kAnnotationTrack = 4ull << 32;
constexpr uint64_t kWaterfallTrack = 5ull << 32;
constexpr uint64_t kGlobalAnnotationTrack = 6ull << 32;
constexpr uint64_t kOverlapTrack = 7ull << 32; // + lane * OverlapLayout::kMaxTracks + k (k >= 1)

constexpr uint32_t kMetaSequence = 1;
constexpr uint32_t kFirstLaneSequence = 16;
constexpr uint32_t kIncrementalClock = PerfettoEncoder::kFirstSequenceClock;

// Argument names of the tracks made here (after the ArgKey names).
enum class ExtraArg : uint8_t { Step, Ns, Text, Author, Count };
const char* extraArgName(ExtraArg a)
{
    static const char* const kNames[] = { "step", "ns", "text", "author" };
    static_assert(sizeof kNames / sizeof kNames[0] == size_t(ExtraArg::Count), "one name per ExtraArg");
    return kNames[size_t(a)];
}

uint64_t flowId(LaneId gpuLane, size_t index)
{
    return (uint64_t(gpuLane) + 1) << 32 | uint64_t(index);
}

// The interning ids of the whole file (stable across sequences, as Perfetto requires).
class Iids {
public:
    explicit Iids(const Trace& t)
        : m_strings(uint64_t(t.stringCount()))
    {
        // Launch configurations shown as "[x,y,z]": one string value per distinct vector.
        const auto& configs = t.kernelConfigs();
        m_configDims.resize(configs.size());
        for (size_t c = 0; c < configs.size(); ++c) {
            m_configDims[c][0] = dimIid(configs[c].grid);
            m_configDims[c][1] = dimIid(configs[c].block);
        }
    }
    static uint64_t category(EventKind k) { return uint64_t(k) + 1; }
    static uint64_t argName(ArgKey k) { return uint64_t(k) + 1; }
    static uint64_t argName(ExtraArg a) { return uint64_t(ArgKey::Count) + 1 + uint64_t(a); }
    uint64_t name(StringId s) const { return uint64_t(s) + 1; }
    uint64_t name(FixedName f) const { return m_strings + uint64_t(f); } // FixedName::None is never asked
    uint64_t nameCount() const { return m_strings + uint64_t(FixedName::Count); }
    uint64_t stringValue(StringId s) const { return uint64_t(s) + 1; }
    uint64_t dimValue(uint32_t config, ArgKey k) const { return m_configDims[config][k == ArgKey::Grid ? 0 : 1]; }
    uint64_t stringValueCount() const { return m_strings + 1 + m_dimTexts.size(); }
    const std::string& dimText(uint64_t iid) const { return m_dimTexts[size_t(iid - m_strings - 1)]; }

private:
    uint64_t dimIid(const uint32_t (&v)[3])
    {
        std::string text = "[" + std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]) + "]";
        for (size_t i = 0; i < m_dimTexts.size(); ++i)
            if (m_dimTexts[i] == text)
                return m_strings + 1 + i;
        m_dimTexts.push_back(std::move(text));
        return m_strings + m_dimTexts.size();
    }
    uint64_t m_strings;
    std::vector<std::array<uint64_t, 2>> m_configDims;
    std::vector<std::string> m_dimTexts;
};

// Which iids a sequence block has already emitted (stamped per block, so nothing is cleared).
struct Seen {
    std::vector<uint32_t> names, values;
    // Indexed by iid: category(kind) = kind + 1 (EventKind::Host is the last kind), argName() likewise.
    uint32_t categories[size_t(EventKind::Host) + 2] = {};
    uint32_t argNames[size_t(ArgKey::Count) + size_t(ExtraArg::Count) + 1] = {};
    uint32_t stamp = 0;
};

// One block: events [first, last) of one lane, one sequence restart.
struct Job {
    LaneId lane = 0;
    size_t first = 0, last = 0;
};

struct JobResult {
    uint64_t events = 0, kernels = 0, flows = 0, clamped = 0, rawBytes = 0;
};

// Per-slot scratch, reused by the jobs that run in that slot.
struct Slot {
    format::ByteBuffer raw, out;
    std::string zscratch;
    Seen seen;
    std::vector<TimeNs> stack;
    struct OpenSlice {
        TimeNs end;
        uint32_t track;
        uint64_t order;
    };
    std::vector<OpenSlice> open;
    std::unique_ptr<format::ZstdCompressor> zstd;
    JobResult result;
    Status status;
};

class Exporter;

// Writes an event's arguments as debug annotations, interning names and values on first use.
class PerfettoArgs final : public EventArgSink {
public:
    PerfettoArgs(const Trace& t, const Iids& iids, Seen& seen, PerfettoEncoder& enc)
        : m_t(t)
        , m_iids(iids)
        , m_seen(seen)
        , m_enc(enc)
    {
    }
    void uintArg(ArgKey key, uint64_t value) override { m_enc.argUint(name(key), value); }
    void dimArg(ArgKey key, const uint32_t (&)[3], uint32_t config) override
    {
        const uint64_t iid = m_iids.dimValue(config, key);
        if (m_seen.values[iid] != m_seen.stamp) {
            m_seen.values[iid] = m_seen.stamp;
            m_enc.internArgString(iid, m_iids.dimText(iid));
        }
        m_enc.argStringIid(name(key), iid);
    }
    void stringArg(ArgKey key, StringId value) override
    {
        const uint64_t iid = m_iids.stringValue(value);
        if (m_seen.values[iid] != m_seen.stamp) {
            m_seen.values[iid] = m_seen.stamp;
            m_enc.internArgString(iid, m_t.str(value));
        }
        m_enc.argStringIid(name(key), iid);
    }

private:
    uint64_t name(ArgKey key)
    {
        const uint64_t iid = Iids::argName(key);
        if (m_seen.argNames[iid] != m_seen.stamp) {
            m_seen.argNames[iid] = m_seen.stamp;
            m_enc.internArgName(iid, argName(key));
        }
        return iid;
    }
    const Trace& m_t;
    const Iids& m_iids;
    Seen& m_seen;
    PerfettoEncoder& m_enc;
};

// A slice of the small tracks made here (steps, annotations, waterfall bars).
struct Item {
    TimeNs start = 0, end = 0;
    uint64_t track = 0;
    std::string name;
    bool instant = false;
    std::vector<std::pair<ExtraArg, int64_t>> ints;
    std::vector<std::pair<ExtraArg, std::string>> texts;
};

class Exporter {
public:
    Exporter(const Trace& t, const PerfettoExportOptions& opt, std::FILE* f)
        : m_t(t)
        , m_opt(opt)
        , m_f(f)
        , m_iids(t)
        , m_offset(t.startTime() < 0 ? -t.startTime() : 0)
    {
        m_ranges.resize(t.laneCount());
        for (const Lane& l : t.lanes())
            m_ranges[l.id] = exportedRange(l.events, opt.from, opt.to);
    }
    Status run(PerfettoExportStats& st);

private:
    uint64_t ts(TimeNs t) const { return uint64_t(std::max<TimeNs>(0, t + m_offset)); }
    bool exported(EventRef r) const
    {
        const auto& [first, last] = m_ranges[r.lane];
        return r.index >= first && r.index < last && isExported(m_t.lane(r.lane).events, r.index, m_opt.from);
    }
    std::vector<Job> plan(); // also counts each GPU lane's overlap tracks (m_tracks)
    uint64_t trackOf(LaneId lane, uint32_t k) const
    {
        return k == 0 ? kLaneTrack + lane : kOverlapTrack + uint64_t(lane) * OverlapLayout::kMaxTracks + k;
    }
    void runJob(const Job& job, Slot& slot) const;
    void emitBegin(const Lane& lane, size_t i, uint64_t delta, PerfettoEncoder& enc, Slot& slot) const;
    Status writeMeta(PerfettoExportStats& st);
    void collectItems(std::vector<Item>& items, PerfettoExportStats& st) const;
    void emitItems(std::vector<Item>& items, PerfettoEncoder& enc, uint64_t& clamped) const;
    Status write(std::string_view bytes);

    const Trace& m_t;
    const PerfettoExportOptions& m_opt;
    std::FILE* m_f;
    Iids m_iids;
    TimeNs m_offset;
    std::vector<std::pair<size_t, size_t>> m_ranges;
    std::vector<uint32_t> m_tracks; // per lane: tracks its events take (OverlapLayout; 1 for most)
    uint64_t m_bytes = 0;
    mutable std::atomic<uint32_t> m_stamp { 0 };
};

Status Exporter::write(std::string_view bytes)
{
    if (bytes.empty())
        return Status::ok();
    if (std::fwrite(bytes.data(), 1, bytes.size(), m_f) != bytes.size())
        return Status::error(std::string("write failed: ") + std::strerror(errno));
    m_bytes += bytes.size();
    return Status::ok();
}

// Cuts every lane's exported events into blocks of at least blockEvents, at points where no
// earlier event is still open.
std::vector<Job> Exporter::plan()
{
    std::vector<Job> jobs;
    m_tracks.assign(m_t.laneCount(), 1);
    for (const Lane& lane : m_t.lanes()) {
        const auto [first, last] = m_ranges[lane.id];
        const LaneEvents& ev = lane.events;
        Job job { lane.id, first, first };
        TimeNs maxEnd = INT64_MIN;
        size_t count = 0;
        const bool layout = OverlapLayout::applies(lane.info);
        OverlapLayout overlaps;
        for (size_t i = first; i < last; ++i) {
            if (!isExported(ev, i, m_opt.from))
                continue;
            if (layout)
                overlaps.place(ev.start(i), ev.end(i));
            if (count >= m_opt.blockEvents && maxEnd <= ev.start(i)) {
                job.last = i;
                jobs.push_back(job);
                job.first = i;
                count = 0;
            }
            maxEnd = std::max(maxEnd, ev.end(i));
            ++count;
        }
        job.last = last;
        if (count)
            jobs.push_back(job);
        m_tracks[lane.id] = overlaps.tracks();
    }
    return jobs;
}

void Exporter::emitBegin(const Lane& lane, size_t i, uint64_t delta, PerfettoEncoder& enc, Slot& slot) const
{
    Seen& seen = slot.seen;
    const EventKind kind = m_t.kindOf(lane.id, i);
    enc.beginEvent(delta, EventType::SliceBegin);
    const FixedName fixed = fixedNameOf(kind);
    const uint64_t nameIid = fixed == FixedName::None ? m_iids.name(lane.events.name(i)) : m_iids.name(fixed);
    if (seen.names[nameIid] != seen.stamp) {
        seen.names[nameIid] = seen.stamp;
        enc.internEventName(nameIid, exportedName(m_t, lane, i));
    }
    enc.nameIid(nameIid);
    const uint64_t cat = Iids::category(kind);
    if (seen.categories[cat] != seen.stamp) {
        seen.categories[cat] = seen.stamp;
        enc.internCategory(cat, toString(kind));
    }
    enc.categoryIid(cat);
    PerfettoArgs args(m_t, m_iids, seen, enc);
    visitEventArgs(m_t, lane, i, args);
    if (m_opt.flows && lane.info.kind == LaneKind::GpuStream) {
        const EventRef launch = m_t.launchOf(lane.id, i);
        if (launch.valid() && exported(launch))
            enc.terminatingFlow(flowId(lane.id, i));
    } else if (m_opt.flows && (kind == EventKind::Api || kind == EventKind::Sync)) {
        for (const EventRef& r : m_t.launchedBy(lane.id, i))
            if (exported(r)) {
                enc.flow(flowId(r.lane, r.index));
                ++slot.result.flows;
            }
    }
    if (kind == EventKind::Kernel)
        ++slot.result.kernels;
    ++slot.result.events;
}

void Exporter::runJob(const Job& job, Slot& slot) const
{
    slot.raw.clear();
    slot.out.clear();
    slot.result = {};
    slot.status = Status::ok();
    Seen& seen = slot.seen;
    seen.stamp = m_stamp.fetch_add(1) + 1;
    seen.names.resize(m_iids.nameCount() + 1);
    seen.values.resize(m_iids.stringValueCount() + 1);
    if (!slot.zstd)
        slot.zstd = std::make_unique<format::ZstdCompressor>(m_opt.zstdLevel);

    const Lane& lane = m_t.lane(job.lane);
    const LaneEvents& ev = lane.events;
    const uint32_t seq = kFirstLaneSequence + job.lane;
    PerfettoEncoder enc(slot.raw);
    size_t i = job.first;
    while (i < job.last && !isExported(ev, i, m_opt.from))
        ++i;
    if (i == job.last)
        return;
    uint64_t last = ts(ev.start(i));
    enc.startSequence(seq, kLaneTrack + job.lane, kIncrementalClock, PerfettoEncoder::kClockRealtime, last,
        job.first == m_ranges[job.lane].first);
    auto flush = [&](bool force) {
        if (!m_opt.compress || (!force && slot.raw.size() < PerfettoEncoder::kMaxRawChunk))
            return;
        slot.result.rawBytes += slot.raw.size();
        if (Status s = PerfettoEncoder::compress(slot.raw.view(), *slot.zstd, slot.out, slot.zscratch); !s)
            slot.status = s;
        slot.raw.clear();
    };
    auto endSlice = [&](TimeNs end) {
        const uint64_t t = ts(end);
        enc.beginEvent(t - last, EventType::SliceEnd);
        enc.endEvent(seq, PerfettoEncoder::kNeedsState);
        last = t;
    };
    std::vector<TimeNs>& stack = slot.stack;
    stack.clear();
    if (OverlapLayout::applies(lane.info)) {
        // A GPU stream: work that overlaps without nesting goes to the lane's overlap tracks with its
        // real times (exportrules.h). Open slices, by end (a nested one before its parent at a tie).
        using Open = Slot::OpenSlice;
        std::vector<Open>& open = slot.open;
        open.clear();
        OverlapLayout overlaps;
        uint64_t order = 0;
        auto closeUpTo = [&](TimeNs t) {
            while (!open.empty() && open.front().end <= t) {
                const uint64_t e = ts(open.front().end);
                enc.beginEvent(e - last, EventType::SliceEnd);
                if (open.front().track)
                    enc.trackUuid(trackOf(job.lane, open.front().track));
                enc.endEvent(seq, PerfettoEncoder::kNeedsState);
                last = e;
                open.erase(open.begin());
            }
        };
        for (; i < job.last; ++i) {
            if (!isExported(ev, i, m_opt.from))
                continue;
            const TimeNs start = ev.start(i);
            TimeNs end = ev.end(i);
            closeUpTo(start);
            const OverlapLayout::Place p = overlaps.place(start, end);
            if (p.clamp && end > p.clampEnd) {
                end = p.clampEnd;
                ++slot.result.clamped;
            }
            const uint64_t t = ts(start);
            emitBegin(lane, i, t - last, enc, slot);
            if (p.track)
                enc.trackUuid(trackOf(job.lane, p.track));
            enc.endEvent(seq, PerfettoEncoder::kNeedsState);
            last = t;
            const Open o { end, p.track, ++order };
            open.insert(
                std::upper_bound(open.begin(), open.end(), o,
                    [](const Open& a, const Open& b) { return a.end != b.end ? a.end < b.end : a.order > b.order; }),
                o);
            flush(false);
        }
        closeUpTo(INT64_MAX);
        if (m_opt.compress)
            flush(true);
        else {
            slot.result.rawBytes += slot.raw.size();
            std::swap(slot.out, slot.raw);
        }
        return;
    }
    for (; i < job.last; ++i) {
        if (!isExported(ev, i, m_opt.from))
            continue;
        const TimeNs start = ev.start(i);
        TimeNs end = ev.end(i);
        while (!stack.empty() && stack.back() <= start) {
            endSlice(stack.back());
            stack.pop_back();
        }
        if (!stack.empty() && end > stack.back()) {
            end = stack.back();
            ++slot.result.clamped;
        }
        const uint64_t t = ts(start);
        emitBegin(lane, i, t - last, enc, slot);
        enc.endEvent(seq, PerfettoEncoder::kNeedsState);
        last = t;
        stack.push_back(end);
        flush(false);
    }
    while (!stack.empty()) {
        endSlice(stack.back());
        stack.pop_back();
    }
    if (m_opt.compress)
        flush(true);
    else {
        slot.result.rawBytes += slot.raw.size();
        std::swap(slot.out, slot.raw);
    }
}

void Exporter::collectItems(std::vector<Item>& items, PerfettoExportStats& st) const
{
    auto inWindow = [&](TimeNs a, TimeNs b) { return a < m_opt.to && (b > m_opt.from || (a == b && a >= m_opt.from)); };
    for (uint32_t r : m_t.ranks())
        for (const Step& s : m_t.steps(r)) {
            if (!inWindow(s.start, s.end))
                continue;
            Item it;
            it.start = s.start;
            it.end = s.end;
            it.track = kStepTrack + r;
            it.name = "step " + std::to_string(s.index);
            it.ints.push_back({ ExtraArg::Step, s.index });
            items.push_back(std::move(it));
            ++st.steps;
        }
    const AnnotationSet& annotations = m_opt.annotations ? *m_opt.annotations : m_t.annotations();
    for (const Annotation& a : annotations.notes) {
        const TimeNs end = std::max(a.startNs, a.endNs);
        if (!inWindow(a.startNs, end))
            continue;
        Item it;
        it.start = a.startNs;
        it.end = end;
        it.instant = end == a.startNs;
        std::optional<LaneId> lane = a.laneKey.empty() ? std::nullopt : m_t.findLane(a.laneKey);
        it.track = lane ? kAnnotationTrack + m_t.lane(*lane).info.rank : kGlobalAnnotationTrack;
        it.name = a.text;
        if (!a.author.empty())
            it.texts.push_back({ ExtraArg::Author, a.author });
        items.push_back(std::move(it));
        ++st.annotations;
    }
    if (!m_opt.analysis)
        return;
    const GapAnalyzer& an = *m_opt.analysis;
    for (uint32_t r : an.ranks())
        for (const GapAnalyzer::StepRecord& rec : an.steps(r)) {
            if (!inWindow(rec.start, rec.end))
                continue;
            GapAnalyzer::Selection sel;
            sel.kind = GapAnalyzer::Selection::Kind::Step;
            sel.rank = int(r);
            sel.firstStep = sel.lastStep = rec.index;
            const GapAnalyzer::Breakdown b = an.analyze(sel);
            TimeNs t = rec.start;
            for (const Bar& bar : b.bars) {
                if (bar.ns == 0)
                    continue;
                Item it;
                it.start = t;
                it.end = t + std::max<TimeNs>(0, bar.ns);
                it.instant = bar.ns <= 0;
                it.track = kWaterfallTrack + r;
                it.name = bar.name;
                it.ints.push_back({ ExtraArg::Step, rec.index });
                it.ints.push_back({ ExtraArg::Ns, bar.ns });
                t = it.end;
                items.push_back(std::move(it));
                ++st.waterfallBars;
            }
        }
}

// The small tracks, on the metadata sequence with absolute timestamps; slices nest per track.
void Exporter::emitItems(std::vector<Item>& items, PerfettoEncoder& enc, uint64_t& clamped) const
{
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
        if (a.track != b.track)
            return a.track < b.track;
        if (a.start != b.start)
            return a.start < b.start;
        return a.end - a.start > b.end - b.start;
    });
    bool named[size_t(ExtraArg::Count)] = {};
    auto argIid = [&](ExtraArg a) {
        if (!named[size_t(a)]) {
            named[size_t(a)] = true;
            enc.internArgName(Iids::argName(a), extraArgName(a));
        }
        return Iids::argName(a);
    };
    std::vector<std::pair<TimeNs, uint64_t>> stack; // open slices: end, track
    auto close = [&]() {
        enc.beginEvent(ts(stack.back().first), EventType::SliceEnd);
        enc.trackUuid(stack.back().second);
        enc.endEvent(kMetaSequence, PerfettoEncoder::kNeedsState);
        stack.pop_back();
    };
    for (Item& it : items) {
        while (!stack.empty() && (stack.back().second != it.track || stack.back().first <= it.start))
            close();
        TimeNs end = it.end;
        if (!stack.empty() && end > stack.back().first) {
            end = stack.back().first;
            ++clamped;
        }
        enc.beginEvent(ts(it.start), it.instant ? EventType::Instant : EventType::SliceBegin);
        enc.trackUuid(it.track);
        enc.name(it.name);
        for (const auto& [k, v] : it.ints)
            enc.argInt(argIid(k), v);
        for (const auto& [k, v] : it.texts)
            enc.argString(argIid(k), v);
        enc.endEvent(kMetaSequence, PerfettoEncoder::kNeedsState);
        if (!it.instant)
            stack.push_back({ end, it.track });
    }
    while (!stack.empty())
        close();
}

Status Exporter::writeMeta(PerfettoExportStats& st)
{
    format::ByteBuffer raw;
    PerfettoEncoder enc(raw);
    const uint64_t t0 = ts(std::max(m_t.startTime(), std::min(m_opt.from, m_t.endTime())));
    enc.primaryClock(kMetaSequence, PerfettoEncoder::kClockRealtime, t0);
    enc.startSequence(kMetaSequence, 0, PerfettoEncoder::kClockRealtime, PerfettoEncoder::kClockRealtime, t0, false);
    std::vector<Item> items;
    collectItems(items, st);
    std::vector<bool> hasAnnotations(m_t.ranks().empty() ? 1 : m_t.ranks().back() + 1);
    bool globalAnnotations = false;
    for (const Item& it : items) {
        if (it.track == kGlobalAnnotationTrack)
            globalAnnotations = true;
        else if (it.track >= kAnnotationTrack && it.track < kAnnotationTrack + hasAnnotations.size())
            hasAnnotations[it.track - kAnnotationTrack] = true;
    }
    for (uint32_t r : m_t.ranks()) {
        enc.trackDescriptor(kRankTrack + r, 0, rankTitle(m_t, r), int32_t(r) + 1);
        enc.trackDescriptor(kStepTrack + r, kRankTrack + r, "steps", 0);
        if (m_opt.analysis)
            enc.trackDescriptor(kWaterfallTrack + r, kRankTrack + r, "budget waterfall", 0);
        if (hasAnnotations[r])
            enc.trackDescriptor(kAnnotationTrack + r, kRankTrack + r, "annotations", 0);
    }
    if (globalAnnotations)
        enc.trackDescriptor(kGlobalAnnotationTrack, 0, "annotations", 0);
    for (const Lane& l : m_t.lanes()) {
        enc.trackDescriptor(kLaneTrack + l.id, kRankTrack + l.info.rank, laneTitle(l.info), 0);
        for (uint32_t k = 1; k < m_tracks[l.id]; ++k)
            enc.trackDescriptor(trackOf(l.id, k), kRankTrack + l.info.rank, overlapTrackTitle(l.info, k), 0);
    }
    emitItems(items, enc, st.clamped);
    st.rawBytes += raw.size();
    if (!m_opt.compress)
        return write(raw.view());
    format::ZstdCompressor zstd(m_opt.zstdLevel);
    format::ByteBuffer out;
    std::string scratch;
    if (Status s = PerfettoEncoder::compress(raw.view(), zstd, out, scratch); !s)
        return s;
    return write(out.view());
}

Status Exporter::run(PerfettoExportStats& st)
{
    const std::vector<Job> jobs = plan();
    if (Status s = writeMeta(st); !s)
        return s;
    // Encoding is memory-bound beyond two threads (the default).
    const unsigned threads = std::min(m_opt.threads ? m_opt.threads : 2u, TaskPool::shared().size());
    std::vector<Slot> slots(size_t(threads) * 4);
    for (size_t at = 0; at < jobs.size(); at += slots.size()) {
        const size_t n = std::min(slots.size(), jobs.size() - at);
        TaskPool::shared().parallelFor(
            n, [&](size_t k) { runJob(jobs[at + k], slots[k]); }, threads);
        for (size_t k = 0; k < n; ++k) {
            const Slot& s = slots[k];
            if (!s.status)
                return s.status;
            if (Status w = write(s.out.view()); !w)
                return w;
            st.events += s.result.events;
            st.kernels += s.result.kernels;
            st.flows += s.result.flows;
            st.clamped += s.result.clamped;
            st.rawBytes += s.result.rawBytes;
        }
    }
    st.blocks = jobs.size();
    st.bytes = m_bytes;
    return Status::ok();
}

} // namespace

Expected<PerfettoExportStats> exportPerfetto(const Trace& trace, std::FILE* f, const PerfettoExportOptions& options)
{
    PerfettoExportStats st;
    if (Status s = Exporter(trace, options, f).run(st); !s)
        return s;
    return st;
}

Expected<PerfettoExportStats> exportPerfetto(
    const Trace& trace, const std::string& path, const PerfettoExportOptions& options)
{
    return writeExportFile(path, [&](std::FILE* f) { return exportPerfetto(trace, f, options); });
}

} // namespace gapscope::model
