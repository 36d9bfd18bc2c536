// SPDX-License-Identifier: MIT
#include "model/io/traceloader.h"

#include "model/base/taskpool.h"
#include "model/format/columnwalker.h"
#include "model/format/memorybudget.h"
#include "model/format/messagearena.h"
#include "model/format/stats.h"
#include "model/format/trace.pb.h"
#include "model/io/chunkimporter.h"
#include "model/io/tracemetaproto.h"
#include "model/trace/eventaux.h"
#include "model/trace/traceimpl.h"

#include <algorithm>
#include <sys/mman.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace gapscope::model {
namespace {

// Decode threads when ReadOptions::threads is 0: decoding is memory-bound beyond two.
constexpr unsigned kDecodeThreads = 2;

using format::FrameType;

// Thread-local map (launch config id, graph id, graph node id) -> trace config index.
class ConfigCache {
public:
    uint32_t* find(uint32_t cfg, uint64_t graph, uint64_t node)
    {
        if (m_slots.empty())
            return nullptr;
        const size_t mask = m_slots.size() - 1;
        for (size_t i = hash(cfg, graph, node) & mask;; i = (i + 1) & mask) {
            Slot& s = m_slots[i];
            if (s.value == UINT32_MAX)
                return nullptr;
            if (s.cfg == cfg && s.graph == graph && s.node == node)
                return &s.value;
        }
    }
    void insert(uint32_t cfg, uint64_t graph, uint64_t node, uint32_t value)
    {
        if ((m_count + 1) * 2 > m_slots.size()) {
            std::vector<Slot> old(std::max<size_t>(256, m_slots.size() * 2));
            old.swap(m_slots);
            m_count = 0;
            for (const Slot& s : old)
                if (s.value != UINT32_MAX)
                    insert(s.cfg, s.graph, s.node, s.value);
        }
        const size_t mask = m_slots.size() - 1;
        size_t i = hash(cfg, graph, node) & mask;
        while (m_slots[i].value != UINT32_MAX)
            i = (i + 1) & mask;
        m_slots[i] = { graph, node, cfg, value };
        ++m_count;
    }

private:
    struct Slot {
        uint64_t graph = 0, node = 0;
        uint32_t cfg = 0, value = UINT32_MAX;
    };
    static size_t hash(uint32_t cfg, uint64_t graph, uint64_t node)
    {
        uint64_t h = (uint64_t(cfg) * 0x9E3779B97F4A7C15ull) ^ (graph * 0xC2B2AE3D27D4EB4Full)
            ^ (node * 0x165667B19E3779F9ull);
        return size_t(h ^ (h >> 29));
    }
    std::vector<Slot> m_slots;
    size_t m_count = 0;
};

// Raw column pointers of one lane (valid once the columns have their final size).
struct LaneCols {
    TimeNs* start = nullptr;
    uint32_t* dur = nullptr;
    uint32_t* name = nullptr;
    uint32_t* corr = nullptr;
    uint32_t* aux = nullptr;
    LaneId id = kNoLane;
};

template <typename T, typename R> const T* column(const R& r)
{
    return r.size() ? r.data() : nullptr;
}

template <typename R> uint64_t at(const R& r, int i)
{
    return r.size() ? uint64_t(r.Get(i)) : 0;
}

// Sizes a column for `n` values. Big columns ask for transparent huge pages before they are first
// touched: one fault per 2 MiB instead of per 4 KiB while the lane is filled.
template <typename T> void sizeColumn(std::vector<T>& v, size_t n)
{
    if (v.capacity() < n)
        v.clear(); // a recycled column too small: its values need not be copied over
    v.reserve(n);
#ifdef MADV_HUGEPAGE
    constexpr uintptr_t kHuge = uintptr_t(2) << 20;
    const uintptr_t begin = reinterpret_cast<uintptr_t>(v.data()), end = begin + n * sizeof(T);
    const uintptr_t lo = (begin + kHuge - 1) & ~(kHuge - 1), hi = end & ~(kHuge - 1);
    if (hi > lo)
        ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
#endif
    v.resize(n); // zeroes only what is new: a recycled column keeps its old values below its size
}

} // namespace

struct TraceLoader::Plan {
    const format::FrameInfo* frame = nullptr;
    const pb::IndexEntry* entry = nullptr;
    std::vector<std::pair<uint32_t, uint64_t>> lanes; // file lane id -> first slot in its trace lane
    std::vector<uint64_t> counts; // events per entry of `lanes` (lane_event_counts, then host ones)
    size_t hostLanes = 0; // the last hostLanes entries of `lanes` count host events
    uint64_t memopBase = 0, syncBase = 0, collBase = 0;
    bool failed = false;
};

// What a decode thread allocates once and fills anew for every chunk: the zstd context, the parse
// arena, the decompressed payload, the column walker's stamps. Tens of MB, first touched page by page,
// so a window's read takes them from the last window's (ScratchPool) instead of the system.
struct DecodeScratch {
    format::ZstdDecompressor zstd;
    format::ColumnWalker walker;
    format::MessageArena arena;
    std::string raw;
};

// Scratch kept between reads of windows: at most kDecodeThreads sets, handed out one per worker.
class ScratchPool {
public:
    static std::unique_ptr<DecodeScratch> take()
    {
        ScratchPool& p = instance();
        std::lock_guard<std::mutex> lock(p.m_mutex);
        if (p.m_free.empty())
            return std::make_unique<DecodeScratch>();
        std::unique_ptr<DecodeScratch> s = std::move(p.m_free.back());
        p.m_free.pop_back();
        return s;
    }
    // Keeps `s` for the next read when `keep` (a window: another one follows), else frees it and all
    // kept sets (a whole read: the memory goes back to the system with the trim after it).
    static void give(std::unique_ptr<DecodeScratch> s, bool keep)
    {
        ScratchPool& p = instance();
        std::lock_guard<std::mutex> lock(p.m_mutex);
        if (!keep)
            p.m_free.clear();
        else if (p.m_free.size() < kDecodeThreads)
            p.m_free.push_back(std::move(s));
    }

private:
    static ScratchPool& instance()
    {
        static ScratchPool pool;
        return pool;
    }
    std::mutex m_mutex;
    std::vector<std::unique_ptr<DecodeScratch>> m_free;
};

struct TraceLoader::Worker {
    std::unique_ptr<DecodeScratch> scratch = ScratchPool::take(); // back to the pool after the load
    std::vector<uint64_t> cursor; // by file lane id
    std::vector<uint64_t> count; // by file lane id
    std::vector<uint64_t> expect; // by file lane id: events the index entry gives it
    ConfigCache configs;
    struct Recent {
        uint64_t graph = 0, node = 0;
        uint32_t cfg = UINT32_MAX, value = 0;
    };
    std::vector<Recent> recent = std::vector<Recent>(1024);
    std::vector<std::pair<std::pair<LaneId, uint64_t>, TimeNs>> longDurations;
    std::vector<std::pair<uint32_t, Step>> steps;
    format::CounterSet<pb::Counter> counters;
    std::vector<pb::GraphNode> graphNodes;
};

// State of the parallel path, shared read-only by the workers once set up.
struct TraceLoader::Shared {
    format::ChunkDecoder decoder;
    std::vector<LaneCols> cols; // by file lane id
    std::vector<LaneId> laneMap; // file lane id -> trace lane
    std::vector<uint64_t> totals; // events per trace lane
};

TraceLoader::TraceLoader(const format::TraceReader& reader, const ReadOptions& options)
    : m_reader(reader)
    , m_options(options)
    , m_threads(options.threads ? options.threads : kDecodeThreads)
{
}

TraceLoader::~TraceLoader() = default;

bool TraceLoader::reportProgress(size_t done, size_t total)
{
    if (m_options.progress && !m_options.progress(total ? double(done) / double(total) : 1.0))
        m_cancelled = true;
    return !m_cancelled;
}

void TraceLoader::readSections()
{
    format::ZstdDecompressor zstd;
    std::string raw;
    Trace& t = *m_builder->m_trace;
    pb::FileHeader header;
    for (const auto& f : m_reader.frames()) {
        auto type = FrameType(f.header.type);
        google::protobuf::Message* msg = nullptr;
        pb::AnnotationSet annotations;
        pb::BudgetSettings budget;
        pb::ClassifierTable classifier;
        if (type == FrameType::Header || type == FrameType::HeaderUpdate)
            msg = &header;
        else if (type == FrameType::Annotations)
            msg = &annotations;
        else if (type == FrameType::Budget)
            msg = &budget;
        else if (type == FrameType::Classifier)
            msg = &classifier;
        else
            continue;
        pb::FileHeader previous = header;
        if (Status s = m_reader.readMessage(f, zstd, raw, *msg); !s) {
            m_warnings.push_back(s.message() + "; section skipped");
            ++m_skippedChunks;
            if (msg == &header)
                header = std::move(previous);
            continue;
        }
        if (type == FrameType::Annotations)
            t.m_annotations = fromProto(annotations);
        else if (type == FrameType::Budget)
            t.m_budget = fromProto(budget);
        else if (type == FrameType::Classifier)
            t.m_classifier = fromProto(classifier);
    }
    if (m_reader.hasIndex() && m_reader.index().has_header())
        header = m_reader.index().header();
    t.m_header = fromProto(header);
}

bool TraceLoader::indexUsable(std::string& why) const
{
    if (!m_reader.hasIndex())
        return false;
    // The index's counts size the columns before anything is decoded. Each is checked against what
    // the frames can back (the CRC-protected frame header's event count, its raw length: an event
    // takes at least one byte), so a damaged or hostile index cannot make us allocate: the frames
    // are then read in order instead.
    for (const auto& f : m_reader.frames()) {
        if (f.header.type != uint8_t(FrameType::Chunk))
            continue;
        const auto& e = m_reader.index().frames(int(f.indexEntry));
        auto bad = [&](const std::string& what) {
            why = m_reader.where(f.offset, "index entry " + std::to_string(f.indexEntry) + ": " + what);
            return false;
        };
        if (e.event_count() != f.header.events)
            return bad("says " + std::to_string(e.event_count()) + " events, the frame holds "
                + std::to_string(f.header.events));
        if (e.event_count() > uint64_t(f.header.rawBytes))
            return bad("more events than the frame has bytes");
        if (e.lane_ids_size() != e.lane_event_counts_size())
            return bad("lane columns differ in length");
        uint64_t sum = 0;
        for (uint64_t c : e.lane_event_counts()) {
            if (c > e.event_count())
                return bad("a lane count exceeds the chunk's events");
            sum += c;
        }
        if (sum != e.event_count())
            return bad("lane counts do not add up to the chunk's events");
        if (e.host_lane_ids_size() != e.host_lane_event_counts_size())
            return bad("host lane columns differ in length");
        for (uint64_t c : e.host_lane_event_counts())
            if (c > uint64_t(f.header.rawBytes))
                return bad("more host events than the frame has bytes");
        if (e.memop_count() > e.event_count() || e.sync_count() > e.event_count()
            || e.collective_count() > e.event_count() || e.kernel_count() > e.event_count()
            || e.memop_count() + e.sync_count() + e.collective_count() + e.kernel_count() > e.event_count()
            || e.step_count() > uint64_t(f.header.rawBytes))
            return bad("per-kind counts exceed the chunk's events");
    }
    return true;
}

void addReadCounters(const format::TraceReader& reader, uint64_t skippedFrames, uint64_t lostEvents,
    bool indexInconsistent, TraceHeader& header)
{
    using format::Stat;
    auto add = [&header](Stat stat, uint64_t value) {
        if (value != 0)
            header.counters.push_back(statCounter(stat, -1, value));
    };
    add(Stat::ReadTruncatedBytes, reader.missingBytes());
    add(Stat::ReadTruncatedEvents, reader.missingEvents());
    add(Stat::ReadDamagedBytes, reader.damagedBytes());
    add(Stat::ReadIndexDamaged, reader.indexDamaged() || indexInconsistent ? 1 : 0);
    add(Stat::ReadIndexMissing, reader.indexMissing() && reader.missingBytes() == 0 ? 1 : 0);
    add(Stat::ReadHeaderDamaged, reader.headerDamaged() ? 1 : 0);
    add(Stat::ReadFramesSkipped, skippedFrames);
    add(Stat::ReadEventsLost, lostEvents);
}

void TraceLoader::addReadCounters(TraceHeader& header) const
{
    model::addReadCounters(m_reader, m_skippedChunks, m_lostEvents, m_indexInconsistent, header);
}

void TraceLoader::noteUnknownFields()
{
    if (m_unknownFieldChunks)
        m_warnings.push_back(m_reader.name() + ": " + std::to_string(m_unknownFieldChunks)
            + " chunk(s) carry fields this build does not know (written by a newer gapscope); those fields were "
              "skipped");
}

Expected<Trace> TraceLoader::load()
{
    readSections();
    std::string why;
    bool parallel = indexUsable(why);
    if (m_options.window() && !parallel)
        return Status::error(m_reader.name() + ": a window of the trace needs its index ("
            + (why.empty() ? std::string("there is none") : why) + "); read it whole");
    if (!parallel && m_reader.hasIndex()) {
        m_indexInconsistent = true;
        m_warnings.push_back(why + "; the index is damaged, frames read in order instead");
    }
    Status s = parallel ? loadParallel() : loadInOrder();
    if (s && parallel && m_indexMismatch && !m_cancelled) {
        // Chunks that read fine did not match their index entries: the index placed them wrongly.
        // Start over in order, where each chunk describes itself.
        m_builder = std::make_unique<TraceBuilder>();
        m_shared.reset();
        m_warnings.clear();
        m_counters.clear();
        m_counterMap.clear();
        m_skippedChunks = m_lostEvents = 0;
        m_unknownFieldChunks = 0;
        readSections();
        m_indexInconsistent = true;
        m_warnings.push_back(m_reader.name() + ": chunks do not match their index entries; the index is damaged, "
            + "frames read in order instead");
        s = loadInOrder();
    }
    if (!s)
        return s;
    if (m_cancelled)
        return Status::error(m_reader.name() + ": cancelled");
    Trace& t = *m_builder->m_trace;
    for (const auto& c : m_counters)
        t.m_header.counters.push_back(c);
    addReadCounters(t.m_header);
    for (const auto& w : t.m_header.warnings) // recorded by whoever wrote the file (an importer, say)
        t.m_warnings.push_back(w);
    t.m_header.warnings.clear();
    for (const auto& w : m_reader.warnings())
        t.m_warnings.push_back(w);
    for (auto& w : m_warnings)
        t.m_warnings.push_back(std::move(w));
    if (m_options.graphNodes) // a window: every node of the file, also those whose chunks were not read
        for (const pb::GraphNode& g : *m_options.graphNodes)
            m_builder->addGraphNode(fromProto(g, *m_builder));
    Trace trace = m_builder->finish(m_options.laneSummaries);
#ifdef __GLIBC__
    // The workers' scratch (arenas, buffers) lived in per-thread malloc arenas: hand it back, so
    // what stays resident is the trace. Not after a window: another window follows, and would take the
    // same memory from the system again.
    if (!m_options.window())
        malloc_trim(0);
#endif
    return trace;
}

Status TraceLoader::loadInOrder()
{
    ChunkImporter importer(*m_builder);
    if (m_reader.hasIndex())
        importer.loadDictionaries(m_reader.index());
    format::ZstdDecompressor zstd;
    format::MessageArena arena;
    std::string raw;
    size_t total = m_reader.frames().size(), done = 0;
    for (const auto& f : m_reader.frames()) {
        if (!reportProgress(done++, total))
            return Status::ok();
        if (f.header.type != uint8_t(FrameType::Chunk))
            continue;
        const uint64_t claimed = std::min<uint64_t>(f.header.events, f.header.rawBytes);
        if (Status s
            = format::MemoryBudget::check((importer.events() + claimed) * format::kTraceBytesPerEvent, m_reader.name());
            !s)
            return s;
        pb::Chunk& chunk = *arena.fresh<pb::Chunk>();
        if (Status s = m_reader.readMessage(f, zstd, raw, chunk); !s) {
            ++m_skippedChunks;
            m_lostEvents += f.header.events;
            m_warnings.push_back(s.message() + "; chunk skipped (" + std::to_string(f.header.events) + " events lost)");
            continue;
        }
        if (format::ChunkDecoder::hasUnknownFields(chunk))
            ++m_unknownFieldChunks;
        if (Status s = importer.add(chunk); !s) {
            ++m_skippedChunks;
            m_lostEvents += f.header.events;
            m_warnings.push_back(m_reader.where(f.offset, "chunk skipped: " + s.message()));
        }
    }
    reportProgress(total, total);
    noteUnknownFields();
    for (const auto& n : importer.decoder().notes())
        m_warnings.push_back(m_reader.name() + ": " + n);
    m_counters = importer.counters();
    return Status::ok();
}

} // namespace gapscope::model

namespace gapscope::model {

Status TraceLoader::planLanes(std::vector<Plan>& plans)
{
    Shared& sh = *m_shared;
    Trace& t = *m_builder->m_trace;
    const pb::Index& index = m_reader.index();
    sh.laneMap.resize(sh.decoder.lanes().size());
    for (size_t i = 0; i < sh.laneMap.size(); ++i)
        sh.laneMap[i] = m_builder->lane(fromProto(sh.decoder.lanes()[i]));
    sh.totals.assign(t.m_lanes.size(), 0);
    uint64_t memops = 0, syncs = 0, colls = 0;
    for (const auto& f : m_reader.frames()) {
        if (f.header.type != uint8_t(FrameType::Chunk))
            continue;
        const pb::IndexEntry& entry = index.frames(int(f.indexEntry));
        if (m_options.window()
            && (entry.max_time_ns() < m_options.windowStart || entry.min_time_ns() >= m_options.windowEnd))
            continue; // outside the window
        Plan p;
        p.frame = &f;
        p.entry = &entry;
        auto place = [&](uint32_t fileLane, uint64_t count) {
            if (fileLane >= sh.laneMap.size()) {
                p.failed = true;
                return false;
            }
            LaneId lane = sh.laneMap[fileLane];
            p.lanes.emplace_back(fileLane, sh.totals[lane]);
            p.counts.push_back(count);
            sh.totals[lane] += count;
            return true;
        };
        for (int k = 0; k < p.entry->lane_ids_size(); ++k)
            place(p.entry->lane_ids(k), p.entry->lane_event_counts(k));
        for (int k = 0; k < p.entry->host_lane_ids_size(); ++k)
            p.hostLanes += place(p.entry->host_lane_ids(k), p.entry->host_lane_event_counts(k)) ? 1 : 0;
        p.memopBase = memops;
        p.syncBase = syncs;
        p.collBase = colls;
        memops += p.entry->memop_count();
        syncs += p.entry->sync_count();
        colls += p.entry->collective_count();
        plans.push_back(std::move(p));
    }
    uint64_t events = 0;
    for (uint64_t n : sh.totals)
        events += n;
    if (Status s = format::MemoryBudget::check(events * format::kTraceBytesPerEvent, m_reader.name()); !s)
        return s;
    if (Trace* spare = recycled()) { // as the lanes' columns
        t.m_memops.swap(spare->m_memops);
        t.m_syncs.swap(spare->m_syncs);
        t.m_collectives.swap(spare->m_collectives);
    }
    sizeColumn(t.m_memops, memops);
    sizeColumn(t.m_syncs, syncs);
    sizeColumn(t.m_collectives, colls);
    return Status::ok();
}

Status TraceLoader::loadParallel()
{
    m_shared = std::make_unique<Shared>();
    Shared& sh = *m_shared;
    const pb::Index& index = m_reader.index();
    sh.decoder.load(index);
    Trace& t = *m_builder->m_trace;
    t.m_strings.assign(1, std::string());
    t.m_strings.insert(t.m_strings.end(), index.strings().begin(), index.strings().end());
    t.m_impl->strings.rebuild(t.m_strings);
    std::vector<Plan> plans;
    if (Status s = planLanes(plans); !s)
        return s;

    std::atomic<bool> outOfMemory { false };
    Trace* spare = recycled();
    TaskPool::shared().parallelFor(
        t.m_lanes.size(),
        [&](size_t l) {
            LaneEvents& e = t.m_lanes[l].events;
            const size_t n = sh.totals[l];
            if (spare && l < spare->m_lanes.size()) {
                // Every slot is written below (or its chunk removed): stale values need no zeroing.
                LaneEvents& old = spare->m_lanes[l].events;
                e.m_start.swap(old.m_start);
                e.m_dur.swap(old.m_dur);
                e.m_name.swap(old.m_name);
                e.m_corr.swap(old.m_corr);
                e.m_aux.swap(old.m_aux);
            }
            try { // within the budget, yet the system may still refuse
                sizeColumn(e.m_start, n);
                sizeColumn(e.m_dur, n);
                sizeColumn(e.m_name, n);
                sizeColumn(e.m_corr, n);
                sizeColumn(e.m_aux, n);
            } catch (const std::bad_alloc&) {
                outOfMemory = true;
            }
        },
        m_threads);
    if (spare)
        *spare = Trace(); // what is left of it: an empty trace
    if (outOfMemory)
        return Status::error(m_reader.name() + ": out of memory while sizing the lanes; "
            + format::MemoryBudget::exceeded(0) + " (or lower it below what the system can give)");
    sh.cols.resize(sh.laneMap.size());
    for (size_t fl = 0; fl < sh.laneMap.size(); ++fl) {
        LaneEvents& e = t.m_lanes[sh.laneMap[fl]].events;
        sh.cols[fl]
            = { e.m_start.data(), e.m_dur.data(), e.m_name.data(), e.m_corr.data(), e.m_aux.data(), sh.laneMap[fl] };
    }

    std::vector<std::unique_ptr<Worker>> workers;
    for (unsigned i = 0; i < m_threads; ++i)
        workers.push_back(std::make_unique<Worker>());
    std::atomic<size_t> next { 0 }, done { 0 };
    auto work = [&](Worker& w, bool reporter) {
        w.cursor.assign(sh.laneMap.size(), 0);
        w.count.assign(sh.laneMap.size(), 0);
        for (size_t i; !m_cancelled && (i = next.fetch_add(1)) < plans.size();) {
            Plan& p = plans[i];
            Status s;
            try { // an exception must not leave a worker thread: it becomes this chunk's error
                pb::Chunk* chunk = w.scratch->arena.fresh<pb::Chunk>();
                s = p.failed ? Status::error(m_reader.where(p.frame->offset, "index names an unknown lane"))
                             : m_reader.readMessage(*p.frame, w.scratch->zstd, w.scratch->raw, *chunk, m_options.kernelConfigs);
                if (p.failed)
                    m_indexMismatch = true;
                if (s && !p.failed) {
                    s = decodeChunk(*chunk, p, w);
                    if (!s)
                        m_indexMismatch = true; // the chunk read fine: its index entry or dictionary is wrong
                }
            } catch (const std::exception& e) {
                s = Status::error(m_reader.where(p.frame->offset, std::string("out of memory decoding: ") + e.what()));
            }
            if (!s) {
                p.failed = true;
                std::lock_guard<std::mutex> lock(m_mutex);
                ++m_skippedChunks;
                m_lostEvents += p.entry->event_count();
                m_warnings.push_back(
                    s.message() + "; chunk skipped (" + std::to_string(p.entry->event_count()) + " events lost)");
            }
            size_t d = done.fetch_add(1) + 1;
            if (reporter)
                reportProgress(d, plans.size());
        }
    };
    // One pool task per Worker (its scratch); the tasks share the plans through `next`.
    TaskPool::shared().parallelFor(
        workers.size(), [&](size_t k) { work(*workers[k], k == 0); }, m_threads);
    reportProgress(plans.size(), plans.size());

    for (auto& w : workers) {
        ScratchPool::give(std::move(w->scratch), m_options.window());
        for (const auto& [where, d] : w->longDurations)
            t.m_lanes[where.first].events.m_longDur[uint32_t(where.second)] = d;
        for (const auto& [rank, step] : w->steps)
            m_builder->addStep(rank, step);
        for (const pb::GraphNode& g : w->graphNodes)
            m_builder->addGraphNode(fromProto(g, *m_builder));
        w->graphNodes.clear();
        m_counterMap.add(w->counters);
    }
    for (const pb::Counter& c : m_counterMap.sorted())
        m_counters.push_back(fromProto(c));
    if (std::any_of(plans.begin(), plans.end(), [](const Plan& p) { return p.failed; }))
        removeFailed(plans);
    noteUnknownFields();
    return Status::ok();
}

uint32_t TraceLoader::configIndex(uint32_t cfg, uint64_t graph, uint64_t node, Worker& w)
{
    // Graph kernels each have their own node: a small direct-mapped cache answers most lookups
    // with one probe before the hash table is asked.
    Worker::Recent& recent = w.recent[size_t((node * 0x9E3779B97F4A7C15ull) >> 54) ^ (cfg & 1023)];
    if (recent.node == node && recent.graph == graph && recent.cfg == cfg)
        return recent.value;
    if (uint32_t* v = w.configs.find(cfg, graph, node)) {
        recent = { graph, node, cfg, *v };
        return *v;
    }
    KernelConfig kc;
    if (const pb::LaunchConfig* lc = m_shared->decoder.config(cfg))
        kc = fromProto(*lc);
    kc.graphId = graph;
    kc.graphNodeId = node;
    uint32_t idx;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        idx = m_builder->config(kc);
    }
    w.configs.insert(cfg, graph, node, idx);
    recent = { graph, node, cfg, idx };
    return idx;
}

Status TraceLoader::checkCounts(const pb::Chunk& ch, const Plan& plan, Worker& w)
{
    const pb::Columns* blocks[] = { &ch.kernels().c(), &ch.memops().c(), &ch.api().c(), &ch.syncs().c(), &ch.nvtx().c(),
        &ch.collectives().c(), &ch.host().c() };
    uint64_t total = 0;
    for (const pb::Columns* c : blocks) {
        for (uint32_t l : c->lane())
            ++w.count[l]; // lane ids were validated against the dictionary
        if (c != &ch.host().c()) // host events are counted apart (IndexEntry.host_lane_event_counts)
            total += uint64_t(c->lane_size());
    }
    bool ok = total == plan.entry->event_count() && uint64_t(ch.memops().c().lane_size()) == plan.entry->memop_count()
        && uint64_t(ch.syncs().c().lane_size()) == plan.entry->sync_count()
        && uint64_t(ch.collectives().c().lane_size()) == plan.entry->collective_count();
    // A lane listed twice (once with other events, once with host events) is counted once: compare sums.
    std::vector<uint64_t>& expect = w.expect;
    expect.assign(w.count.size(), 0);
    for (size_t k = 0; k < plan.lanes.size(); ++k)
        expect[plan.lanes[k].first] += plan.counts[k];
    const size_t others = plan.lanes.size() - plan.hostLanes;
    for (size_t k = 0; k < plan.lanes.size(); ++k) {
        const uint32_t fl = plan.lanes[k].first;
        ok = ok && w.count[fl] == expect[fl];
        // The lane's events fill one run of slots: it starts at its first entry.
        auto same = [fl](const std::pair<uint32_t, uint64_t>& e) { return e.first == fl; };
        if (k < others || std::none_of(plan.lanes.begin(), plan.lanes.begin() + long(others), same))
            w.cursor[fl] = plan.lanes[k].second;
    }
    for (const pb::Columns* c : blocks)
        for (uint32_t l : c->lane())
            w.count[l] = 0;
    return ok ? Status::ok()
              : Status::error(m_reader.where(plan.frame->offset, "chunk does not match its index entry"));
}

Status TraceLoader::decodeChunk(const pb::Chunk& ch, const Plan& plan, Worker& w)
{
    Shared& sh = *m_shared;
    if (Status s = sh.decoder.validate(ch); !s)
        return Status::error(m_reader.where(plan.frame->offset, s.message()));
    if (format::ChunkDecoder::hasUnknownFields(ch))
        ++m_unknownFieldChunks;
    if (Status s = checkCounts(ch, plan, w); !s)
        return s;
    auto put = [&](uint32_t fl, int64_t s, int64_t d, uint32_t name, uint32_t corr, uint32_t a) {
        const uint64_t pos = w.cursor[fl]++;
        const LaneCols& lc = sh.cols[fl];
        lc.start[pos] = s;
        lc.dur[pos] = d >= int64_t(UINT32_MAX) ? UINT32_MAX : uint32_t(d);
        if (d >= int64_t(UINT32_MAX))
            w.longDurations.push_back({ { lc.id, pos }, TimeNs(d) });
        lc.name[pos] = name;
        lc.corr[pos] = corr;
        lc.aux[pos] = a;
    };
    const int64_t base = ch.base_time_ns();
    const auto& k = ch.kernels();
    const uint32_t* cfg = column<uint32_t>(k.config());
    const uint64_t* graph = column<uint64_t>(k.graph_id());
    const int64_t* nodeDelta = column<int64_t>(k.graph_node_delta());
    uint64_t node = 0;
    uint32_t lastCfg = UINT32_MAX, lastIdx = 0;
    const size_t lanes = sh.decoder.lanes().size(), strings = sh.decoder.strings().size();
    if (!m_options.kernelConfigs) {
        w.scratch->walker.walk(k.c(), base, lanes, strings, [&](int, uint32_t l, int64_t s, int64_t d, uint32_t n, uint32_t c) {
            put(l, s, d, n, c, aux::pack(EventKind::Kernel, aux::kMaxPayload));
        });
        decodeOthers(ch, plan, w, put);
        return Status::ok();
    }
    w.scratch->walker.walk(k.c(), base, lanes, strings, [&](int i, uint32_t l, int64_t s, int64_t d, uint32_t n, uint32_t c) {
        node += nodeDelta ? uint64_t(nodeDelta[i]) : 0;
        uint32_t cf = cfg ? cfg[i] : 0;
        uint64_t g = graph ? graph[i] : 0;
        uint32_t idx;
        if (g == 0 && node == 0 && cf == lastCfg) // eager launches repeat configs: skip the lookup
            idx = lastIdx;
        else
            idx = configIndex(cf, g, node, w);
        if (g == 0 && node == 0) {
            lastCfg = cf;
            lastIdx = idx;
        }
        put(l, s, d, n, c, aux::pack(EventKind::Kernel, idx));
    });
    decodeOthers(ch, plan, w, put);
    return Status::ok();
}

} // namespace gapscope::model

namespace gapscope::model {

template <typename Put> void TraceLoader::decodeOthers(const pb::Chunk& ch, const Plan& plan, Worker& w, Put& put)
{
    Trace& t = *m_builder->m_trace;
    const int64_t base = ch.base_time_ns();
    const size_t lanes = m_shared->decoder.lanes().size(), strings = m_shared->decoder.strings().size();
    auto walk = [&](const pb::Columns& c, int64_t b, auto&& f) { w.scratch->walker.walk(c, b, lanes, strings, f); };
    const auto& m = ch.memops();
    walk(m.c(), base, [&](int i, uint32_t l, int64_t s, int64_t d, uint32_t, uint32_t c) {
        const uint64_t slot = plan.memopBase + uint64_t(i);
        auto kind = MemopKind(at(m.kind(), i));
        t.m_memops[slot] = { kind, CopyKind(at(m.copy_kind(), i)), at(m.bytes(), i), (at(m.flags(), i) & 1) != 0 };
        put(l, s, d, 0, c, aux::pack(kind == MemopKind::Memset ? EventKind::Memset : EventKind::Memcpy, uint32_t(slot)));
    });
    const auto& a = ch.api();
    walk(a.c(), base, [&](int i, uint32_t l, int64_t s, int64_t d, uint32_t n, uint32_t c) {
        put(l, s, d, n, c, aux::pack(EventKind::Api, at(a.api_kind(), i) == pb::API_DRIVER ? 1u : 0u));
    });
    const auto& sy = ch.syncs();
    walk(sy.c(), base, [&](int i, uint32_t l, int64_t s, int64_t d, uint32_t, uint32_t c) {
        const uint64_t slot = plan.syncBase + uint64_t(i);
        t.m_syncs[slot] = { SyncKind(at(sy.sync_kind(), i)), at(sy.stream(), i) };
        put(l, s, d, 0, c, aux::pack(EventKind::Sync, uint32_t(slot)));
    });
    const auto& nv = ch.nvtx();
    walk(nv.c(), base, [&](int i, uint32_t l, int64_t s, int64_t d, uint32_t n, uint32_t) {
        put(l, s, d, n, 0,
            aux::pack(EventKind::Nvtx, uint32_t(std::min<uint64_t>(at(nv.depth(), i), aux::kMaxPayload))));
    });
    const auto& ho = ch.host();
    walk(ho.c(), base, [&](int i, uint32_t l, int64_t s, int64_t d, uint32_t n, uint32_t) {
        const uint64_t kind = at(ho.kind(), i);
        put(l, s, d, n, 0,
            aux::packHost(kind < kHostKinds ? HostKind(kind) : HostKind::CpuOp,
                uint32_t(std::min<uint64_t>(at(ho.depth(), i), aux::kMaxHostDepth))));
    });
    const auto& co = ch.collectives();
    walk(co.c(), base, [&](int i, uint32_t l, int64_t s, int64_t d, uint32_t n, uint32_t) {
        const uint64_t slot = plan.collBase + uint64_t(i);
        CollectiveInfo& info = t.m_collectives[slot];
        info = { at(co.bytes(), i), uint32_t(at(co.datatype(), i)), uint32_t(at(co.algorithm(), i)),
            uint32_t(at(co.protocol(), i)), at(co.sequence(), i), at(co.comm(), i), uint32_t(at(co.channels(), i)),
            uint32_t(at(co.root(), i)) };
        put(l, s, d, n, uint32_t(info.sequence), aux::pack(EventKind::Collective, uint32_t(slot)));
    });
    format::forEachStep(ch.steps(), base, [&](const format::StepRecord& r) {
        w.steps.push_back({ r.rank, fromRecord(r, m_shared->decoder.string(r.label)) });
    });
    for (const auto& c : ch.counters())
        w.counters.add(c);
    for (const auto& g : ch.graph_nodes())
        w.graphNodes.push_back(g);
}

void TraceLoader::removeFailed(const std::vector<Plan>& plans)
{
    Trace& t = *m_builder->m_trace;
    const Shared& sh = *m_shared;
    // Mark the slots of failed chunks, then compact each lane (rare path: damaged files only).
    std::vector<std::vector<uint8_t>> dead(t.m_lanes.size());
    for (const Plan& p : plans) {
        if (!p.failed)
            continue;
        int k = 0;
        for (const auto& [fl, first] : p.lanes) {
            LaneId lane = sh.laneMap[fl];
            if (dead[lane].empty())
                dead[lane].assign(sh.totals[lane], 0);
            // A damaged index may claim more events than the lane holds: mark only what exists.
            const size_t size = dead[lane].size(), from = std::min<size_t>(first, size);
            const size_t count = k < int(p.counts.size()) ? p.counts[k] : 0;
            ++k;
            std::fill_n(dead[lane].begin() + long(from), std::min(count, size - from), uint8_t(1));
        }
    }
    for (LaneId l = 0; l < t.m_lanes.size(); ++l) {
        if (dead[l].empty())
            continue;
        LaneEvents& e = t.m_lanes[l].events;
        std::unordered_map<uint32_t, TimeNs> longDur;
        size_t out = 0;
        for (size_t i = 0; i < e.size(); ++i) {
            if (dead[l][i])
                continue;
            if (e.m_dur[i] == UINT32_MAX)
                longDur[uint32_t(out)] = e.duration(i);
            e.m_start[out] = e.m_start[i];
            e.m_dur[out] = e.m_dur[i];
            e.m_name[out] = e.m_name[i];
            e.m_corr[out] = e.m_corr[i];
            e.m_aux[out] = e.m_aux[i];
            ++out;
        }
        e.m_longDur.swap(longDur);
        for (auto* v : { &e.m_dur, &e.m_name, &e.m_corr, &e.m_aux })
            v->resize(out);
        e.m_start.resize(out);
        e.shrink();
    }
}

} // namespace gapscope::model
