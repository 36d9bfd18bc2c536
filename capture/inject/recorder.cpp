// SPDX-License-Identifier: MIT
#include "capture/inject/recorder.h"
#include "capture/inject/nvtxhooks.h"
#include "model/format/wholegraph.h"

namespace gapscope::capture::inject {

namespace {
constexpr size_t kMaxCache = 8192;

// A kernel of a CUDA-graph replay recorded node by node (not a replay timed whole).
bool graphNodeKernel(const GpuRecord& g)
{
    return g.kind == GpuRecordKind::Kernel && g.graphId != 0 && g.graphNodeId != format::kWholeGraphNode;
}
} // namespace

Recorder::Recorder(Channels& channels, Tracer& tracer)
    : m_channels(channels)
    , m_tracer(tracer)
    , m_converter(tracer.layout())
{
}

Status Recorder::configure(StepRule rule, const std::string& pattern)
{
    m_rule = rule;
    m_window.reset();
    m_pending.clear();
    m_builder.reset();
    m_nvtxMatch.clear();
    m_anchorMatch.clear();
    m_counters = Counters();
    m_firstRecord = 0;
    m_sawAfter = false;
    m_pattern.reset();
    m_converter = ActivityConverter(m_tracer.layout());
    if ((rule == StepRule::Nvtx || rule == StepRule::Anchor) && pattern.empty())
        return Status::error(std::string("the ") + toString(rule) + " step rule needs a pattern");
    if (!pattern.empty()) {
        auto matcher = model::PatternMatcher::compile(pattern);
        if (!matcher)
            return Status::error("step pattern \"" + pattern + "\": " + matcher.status().message());
        m_pattern = std::move(*matcher);
    }
    return Status::ok();
}

void Recorder::beginPlan(const ChunkBuilder::Identity& identity)
{
    m_builder = std::make_unique<ChunkBuilder>(
        identity, [this](uint8_t domain, uint32_t cbid) { return m_tracer.apiName(domain, cbid); });
    m_pending.clear();
    m_firstRecord = 0;
    m_sawAfter = false;
}

void Recorder::endPlan()
{
    m_builder.reset();
    m_pending.clear();
}

bool Recorder::nameMatches(const std::string& name)
{
    if (!m_pattern)
        return false;
    auto it = m_nvtxMatch.find(name);
    if (it != m_nvtxMatch.end())
        return it->second;
    const bool match = m_pattern->search(name);
    if (m_nvtxMatch.size() >= kMaxCache)
        m_nvtxMatch.clear();
    m_nvtxMatch.emplace(name, match);
    return match;
}

bool Recorder::anchorMatches(const char* symbol)
{
    if (!symbol || !m_pattern)
        return false;
    auto it = m_anchorMatch.find(symbol);
    if (it != m_anchorMatch.end())
        return it->second;
    const bool match = m_pattern->search(ChunkBuilder::demangle(symbol));
    if (m_anchorMatch.size() >= kMaxCache)
        m_anchorMatch.clear();
    m_anchorMatch.emplace(symbol, match);
    return match;
}

void Recorder::addMarker(const StepMarker& m, std::vector<NewMarker>& out)
{
    const uint64_t index = m_window.addMarker(m);
    out.push_back(NewMarker { index, m.time });
}

void Recorder::drainHost(std::vector<NewMarker>& newMarkers)
{
    // Markers queued from here on are not drained now (a step's work starts after its marker).
    m_window.setMarkersDrainedAt(nowRealtimeNs());
    if (auto* q = m_channels.markers.load(std::memory_order_acquire)) {
        StepMarker m;
        while (q->tryPop(m)) {
            if (m.source == MarkerSource::AnchorLaunch && !(m_rule == StepRule::Anchor && anchorMatches(m.symbol)))
                continue;
            if (m.source == MarkerSource::GraphLaunch && m_rule != StepRule::Graph)
                continue;
            addMarker(m, newMarkers);
        }
    }
    auto* q = m_channels.nvtx.load(std::memory_order_acquire);
    if (!q)
        return;
    NvtxRecord r;
    while (q->tryPop(r)) {
        const bool opens = r.op == NvtxOp::Push || r.op == NvtxOp::Start;
        if (opens && m_rule == StepRule::Nvtx && nameMatches(std::string(r.name, strnlen(r.name, sizeof(r.name))))) {
            StepMarker m;
            m.time = r.time;
            m.tid = r.tid;
            m.source = MarkerSource::Nvtx;
            addMarker(m, newMarkers);
        }
        if (m_builder && m_window.placeHost(r.time, nullptr) != StepWindow::Place::Before)
            m_builder->addNvtx(r);
    }
}

void Recorder::place(const GpuRecord& r)
{
    uint64_t step = 0;
    switch (m_window.placeGpu(r, &step)) {
    case StepWindow::Place::Before:
        return;
    case StepWindow::Place::Late:
        ++m_counters.lateDropped;
        return;
    case StepWindow::Place::After:
        if (r.kind == GpuRecordKind::Kernel || r.kind == GpuRecordKind::Memcpy || r.kind == GpuRecordKind::Memset)
            m_sawAfter = true;
        return;
    case StepWindow::Place::Pending:
        if (m_pending.size() >= kMaxPending) {
            m_pending.pop_front();
            ++m_counters.pendingDropped;
        }
        m_pending.push_back(r);
        return;
    case StepWindow::Place::Inside:
        break;
    }
    if (r.kind == GpuRecordKind::Kernel || r.kind == GpuRecordKind::Memcpy || r.kind == GpuRecordKind::Memset)
        m_window.accountGpu(step, r.start, r.end);
    if (m_builder) {
        m_builder->addGpu(r);
        ++m_counters.inside;
    }
}

void Recorder::drainGpu(const std::function<void()>& checkpoint)
{
    BufferPool* pool = m_channels.pool.load(std::memory_order_acquire);
    if (!pool)
        return;
    // Records that waited for an NVTX marker's id get another chance first.
    std::deque<GpuRecord> pending;
    pending.swap(m_pending);
    BufferPool::Filled f;
    while (pool->takeCompleted(f)) {
        ++m_counters.buffers;
        m_batch.clear();
        m_tracer.forEachRecord(f.data, f.validSize, [this](const void* rec) {
            GpuRecord g;
            switch (m_converter.convert(rec, g)) {
            case ActivityConverter::Result::Converted:
                if (graphNodeKernel(g) && m_tracer.replacedByTimedReplay(g.correlation)) {
                    ++m_counters.skipped; // its replay comes whole, timed by events
                    break;
                }
                m_batch.push_back(g);
                break;
            case ActivityConverter::Result::NoTiming:
                ++m_counters.noTiming;
                break;
            case ActivityConverter::Result::Skipped:
                ++m_counters.skipped;
                break;
            }
        });
        pool->release(f.data);
        noteBatch();
        for (const GpuRecord& g : pending)
            place(g);
        pending.clear();
        for (const GpuRecord& g : m_batch)
            place(g);
        if (checkpoint)
            checkpoint();
    }
    for (const GpuRecord& g : pending)
        place(g);
    m_batch.clear();
    m_tracer.takeTimedReplays(m_batch);
    noteBatch();
    for (const GpuRecord& g : m_batch)
        place(g);
}

void Recorder::noteBatch()
{
    m_counters.records += m_batch.size();
    for (const GpuRecord& g : m_batch) {
        if (graphNodeKernel(g))
            m_channels.graphKernelsRecorded.store(true, std::memory_order_relaxed);
        if (g.kind == GpuRecordKind::Api)
            m_window.noteApi(g);
        else if (m_firstRecord == 0 || g.start < m_firstRecord)
            m_firstRecord = g.start;
    }
}

void Recorder::drainCollectives()
{
    auto* q = m_channels.collectives.load(std::memory_order_acquire);
    if (!q)
        return;
    CollectiveRecord c;
    while (q->tryPop(c)) {
        if (m_builder && m_window.placeHost(c.start, nullptr) == StepWindow::Place::Inside)
            m_builder->addCollective(c);
    }
}

void Recorder::discardBuffers()
{
    BufferPool* pool = m_channels.pool.load(std::memory_order_acquire);
    if (!pool)
        return;
    BufferPool::Filled f;
    while (pool->takeCompleted(f))
        pool->release(f.data);
    m_pending.clear();
}

void Recorder::emitSteps(bool all)
{
    const pb::StepSource source = m_rule == StepRule::Nvtx ? pb::STEP_NVTX
        : m_rule == StepRule::Anchor                       ? pb::STEP_ANCHOR
                                                           : pb::STEP_GRAPH;
    for (const StepWindow::StepSpan& s : m_window.takeFinishedSteps(all)) {
        if (m_builder)
            m_builder->addStep(
                uint32_t(s.localIndex), s.start, uint64_t(std::max<int64_t>(0, s.end - s.start)), source);
    }
}

} // namespace gapscope::capture::inject
