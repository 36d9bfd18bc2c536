// SPDX-License-Identifier: MIT
#include "model/sql/sqltables.h"

#include "model/base/json.h"
#include "model/io/tracewindow.h"
#include "model/trace/kernelname.h"
#include "model/trace/owntime.h"
#include "model/trace/tracesummary.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <deque>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace gapscope::model::sql {

namespace {

constexpr ColumnType I = ColumnType::Integer, R = ColumnType::Real, T = ColumnType::Text;
const ColumnDef kCapture { "capture", I, "", "the capture the row is of (captures.capture)" };

std::vector<TableDef> makeDefs()
{
    std::vector<TableDef> d;
    d.push_back({ TableId::Kernels, "kernels", "every kernel that ran on a GPU",
        { kCapture, { "rank", I, "", "the rank (GPU process) it ran on" }, { "device", I, "", "CUDA device index" },
            { "stream", I, "", "GPU stream id" }, { "name", T, "", "the full kernel name", true },
            { "short_name", T, "", "the name without return type, template arguments and parameters", true },
            { "step", I, "", "the step whose window holds the kernel's start (NULL: in none)" },
            { "step_kind", T, "", "that step's kind: decode, prefill, mixed, draft, verify, unknown" },
            { "start", I, "ns", "start on the trace's clock" }, { "end", I, "ns", "end" },
            { "dur", I, "ns", "duration (end - start)" },
            { "own", I, "ns", "own time: from the later of its start and the end of earlier work on its stream" },
            { "class", T, "", "the classifier's class (NULL: unclassified)" },
            { "component", T, "", "the budget components of that class, joined with '+' (NULL: none)" },
            { "graph_id", I, "", "CUDA graph id (NULL: not launched from a graph)" },
            { "graph_node", I, "", "CUDA graph node id (NULL: not known)" },
            { "correlation", I, "", "correlation id linking it to its launch call" },
            { "grid", T, "", "grid dimensions x,y,z (NULL: not recorded)" },
            { "block", T, "", "block dimensions x,y,z (NULL: not recorded)" } } });
    d.push_back({ TableId::Steps, "steps", "every step of every rank, as summary's step table",
        { kCapture, { "rank", I, "", "the rank" }, { "step", I, "", "step index, aligned across ranks" },
            { "kind", T, "", "decode, prefill, mixed, draft, verify or unknown" },
            { "label", T, "", "the step annotation's text (NULL: none)" },
            { "batch", I, "", "requests in the batch, when the annotation says (NULL: not known)" },
            { "tokens", I, "", "tokens processed, when the annotation says (NULL: not known)" },
            { "start", I, "ns", "the step's start" }, { "end", I, "ns", "the end of its window" },
            { "window", I, "ns", "[start of this step, start of the next) (the last: its recorded end)" },
            { "gpu_span", I, "ns", "the recorded end minus the start" },
            { "gpu_busy", I, "ns", "per stream, the union of GPU work in the window, summed over streams" },
            { "kernels", I, "", "kernels starting in the window" } } });
    d.push_back({ TableId::Bars, "bars", "the waterfall of each analysed (rank, step), as analyze --json's steps",
        { kCapture, { "rank", I, "", "the rank" }, { "step", I, "", "step index" },
            { "position", I, "", "the bar's place in the waterfall, from 0" }, { "bar", T, "", "the bar's name" },
            { "kind", T, "", "budget, gap or measured" },
            { "ns", I, "ns", "the bar's time (a gap bar may be negative)" }, { "ms", R, "", "the same in ms" },
            { "incomplete", I, "", "1: the step is missing on some rank (kept out of summaries)" } } });
    d.push_back({ TableId::Collectives, "collectives", "each rank's collective kernels, matched across ranks",
        { kCapture, { "rank", I, "", "the rank" }, { "step", I, "", "the step (NULL: in none)" },
            { "op", T, "", "AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv, Broadcast or collective" },
            { "name", T, "", "the kernel's name", true },
            { "communicator", I, "", "communicator of the match key (NULL: matched by position)" },
            { "seq", I, "", "sequence number of the match key (NULL: matched by position)" },
            { "bytes", I, "bytes", "payload, where a collective record starts with the kernel (NULL: not known)" },
            { "start", I, "ns", "start" }, { "end", I, "ns", "end" }, { "dur", I, "ns", "duration" },
            { "wait", I, "ns", "time waiting for the last rank to arrive" },
            { "wire", I, "ns", "the rest: dur - wait" } } });
    d.push_back({ TableId::HostEvents, "host_events", "host events: CPU operators, Python frames, CUDA API calls, NVTX",
        { kCapture, { "rank", I, "", "the rank" }, { "pid", I, "", "process id" }, { "thread", I, "", "thread id" },
            { "kind", T, "",
                "cpu_op, python_function, user_annotation, os_runtime, sampled, cuda_runtime, cuda_driver or nvtx" },
            { "name", T, "", "the event's name", true }, { "depth", I, "", "nesting depth on its lane (0: outermost)" },
            { "step", I, "", "the step whose window holds its start (NULL: in none)" }, { "start", I, "ns", "start" },
            { "end", I, "ns", "end" }, { "dur", I, "ns", "duration" },
            { "correlation", I, "", "correlation id (API calls: the GPU work they launched)" } } });
    d.push_back({ TableId::Gaps, "gaps", "every idle interval of the analysed steps, with its host attribution",
        { kCapture, { "rank", I, "", "the rank" }, { "step", I, "", "the step" },
            { "kind", T, "", "launch/host gap, sync stall, step gap or idle inside a graph replay" },
            { "start", I, "ns", "start" }, { "end", I, "ns", "end" }, { "dur", I, "ns", "duration" },
            { "next_name", T, "", "the GPU event that ends the gap (NULL: none)", true },
            { "host_name", T, "", "the host event with the most time in the gap (NULL: none)", true },
            { "host_kind", T, "", "that event's kind, as host_events.kind" },
            { "explained", I, "ns", "time of the gap inside some host event" },
            { "no_launch", I, "ns", "unattributed: the next event's launch is not recorded" },
            { "queued", I, "ns", "unattributed: its launch had returned, the GPU waited on something else" },
            { "other_threads", I, "ns", "unattributed on the launching thread, busy on another" },
            { "nothing", I, "ns", "unattributed: no host event on any thread" },
            { "sync_call", T, "", "sync stalls: the call the host was blocked in (NULL: not found)" } } });
    d.push_back({ TableId::Counters, "counters", "loss and anomaly counters of the trace",
        { kCapture, { "rank", I, "", "the rank (NULL: the whole trace)" }, { "name", T, "", "counter name" },
            { "value", I, "", "its value" }, { "severity", T, "", "info, warning, error or data_loss" },
            { "meaning", T, "", "what it counts" } } });
    d.push_back({ TableId::Ranks, "ranks", "the ranks (GPU processes) of the trace",
        { kCapture, { "rank", I, "", "the rank" }, { "host", T, "", "host name" }, { "pid", I, "", "process id" },
            { "device", I, "", "CUDA device index" }, { "gpu", T, "", "the GPU's name (NULL: not known)" },
            { "world_size", I, "", "ranks in its job, as it said (NULL: not known)" },
            { "process", T, "", "process name (NULL: not known)" }, { "steps", I, "", "its steps" },
            { "events", I, "", "its events" }, { "kernels", I, "", "its kernels" },
            { "kernel_ns", I, "ns", "the sum of its kernels' durations" } } });
    d.push_back({ TableId::Gpus, "gpus", "the GPUs the trace names",
        { kCapture, { "host", T, "", "host name" }, { "device", I, "", "CUDA device index" },
            { "name", T, "", "GPU name" }, { "uuid", T, "", "GPU UUID" }, { "sm_count", I, "", "SMs" },
            { "memory_bytes", I, "bytes", "memory" }, { "sm_clock_mhz", I, "", "max SM clock, MHz" },
            { "memory_clock_mhz", I, "", "max memory clock, MHz" }, { "compute_capability", T, "", "major.minor" },
            { "bandwidth_gbs", R, "", "peak memory bandwidth, GB/s" }, { "pci_bus_id", T, "", "PCI bus id" } } });
    d.push_back({ TableId::Captures, "captures", "one row per trace: where it came from",
        { kCapture, { "file", T, "", "the file(s) read, joined with '; '" }, { "bytes", I, "bytes", "their size" },
            { "source", T, "", "what wrote it: gapscope-agent, kineto, nsys, ..." },
            { "tool_version", T, "", "the writer's version" },
            { "created", T, "", "when it was written, UTC, ISO 8601 (NULL: not known)" },
            { "created_ns", I, "ns", "the same, ns since the Unix epoch (NULL: not known)" },
            { "host", T, "", "the hosts of its ranks, joined with ', '" }, { "ranks", I, "", "ranks" },
            { "steps", I, "", "steps (the most of any rank)" }, { "start", I, "ns", "first event" },
            { "end", I, "ns", "last event's end" }, { "labels", T, "", "the labels as a JSON object" } } });
    d.push_back({ TableId::Labels, "labels", "the labels of each capture (export --label key=value)",
        { kCapture, { "key", T, "", "label key" }, { "value", T, "", "label value" } } });
    return d;
}

std::string_view sv(const std::string& s)
{
    return std::string_view(s);
}

// Rows computed on open, each a run of cells; texts the rows own live in `texts` (stable addresses).
class MaterialCursor final : public RowCursor {
public:
    explicit MaterialCursor(size_t columns)
        : m_columns(columns)
    {
    }
    void beginRow() { m_cells.resize(m_cells.size() + m_columns); }
    void set(size_t column, Cell c) { m_cells[m_cells.size() - m_columns + column] = c; }
    void setText(size_t column, std::string s)
    {
        m_texts.push_back(std::move(s));
        set(column, Cell::text(m_texts.back()));
    }
    bool next() override
    {
        if (m_row == SIZE_MAX)
            m_row = 0;
        else
            ++m_row;
        return m_row * m_columns < m_cells.size();
    }
    Cell cell(size_t column) const override { return m_cells[m_row * m_columns + column]; }

private:
    size_t m_columns;
    std::vector<Cell> m_cells;
    std::deque<std::string> m_texts;
    size_t m_row = SIZE_MAX;
};

Cell optInt(bool known, int64_t v)
{
    return known ? Cell::integer(v) : Cell::null();
}

std::string dims(const uint32_t d[3])
{
    return std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]);
}

std::string isoTime(int64_t unixNs)
{
    const time_t t = time_t(unixNs / 1'000'000'000);
    struct tm tm { };
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

} // namespace

const std::vector<TableDef>& tableDefs()
{
    static const std::vector<TableDef> defs = makeDefs();
    return defs;
}

const TableDef& tableDef(TableId id)
{
    return tableDefs()[size_t(id)];
}

std::string createStatement(const TableDef& table, const std::string& qualifiedName)
{
    std::string s = "CREATE TABLE " + qualifiedName + "(";
    for (size_t i = 0; i < table.columns.size(); ++i) {
        const ColumnDef& c = table.columns[i];
        s += i ? ", " : "";
        s += std::string("\"") + c.name + "\" ";
        s += c.type == ColumnType::Integer ? "INTEGER" : c.type == ColumnType::Real ? "REAL" : "TEXT";
    }
    return s + ")";
}

std::string schemaMarkdown()
{
    std::string out;
    for (const TableDef& t : tableDefs()) {
        std::string meaning = t.meaning;
        meaning[0] = char(std::toupper(static_cast<unsigned char>(meaning[0])));
        out += std::string("### ") + t.name + "\n\n" + meaning
            + ".\n\n| column | type | unit | meaning |\n| --- | --- | --- | --- |\n";
        for (const ColumnDef& c : t.columns) {
            const char* type = c.type == ColumnType::Integer ? "integer" : c.type == ColumnType::Real ? "real" : "text";
            out += std::string("| `") + c.name + "` | " + type + " | " + c.unit + " | " + c.meaning + " |\n";
        }
        out += "\n";
    }
    return out;
}

// What the cursors share: per rank its steps and their windows, per kernel name its short form and class.
struct TraceTables::Impl {
    const Trace& trace;
    TraceTables::Analysis analysis;
    Scope scope;

    struct RankSteps {
        const std::vector<Step>* steps = nullptr;
        std::vector<TimeNs> starts, ends; // windows
    };
    std::unordered_map<uint32_t, RankSteps> ranks;

    // Per name id, filled on first use by any cursor (one query runs cursors one at a time, but the
    // export may read two tables at once on different threads: hence the lock).
    mutable std::mutex namesLock;
    mutable std::vector<uint8_t> nameDone;
    mutable std::vector<std::string> shortName;
    mutable std::vector<int32_t> nameClass;
    std::vector<std::string> classComponents; // by class

    std::optional<std::vector<RankStats>> rankStats; // setRankStats()

    // Collective records' bytes by (rank, start) from the ranks' collective lanes (filled when the
    // collectives table is first read).
    mutable std::once_flag bytesOnce;
    mutable std::map<std::pair<uint32_t, TimeNs>, uint64_t> collectiveBytes;

    // The analysis and host attribution, asked for once.
    mutable std::once_flag analyzerOnce, hostOnce;
    mutable const GapAnalyzer* analyzerPtr = nullptr;
    mutable const HostAttribution* hostPtr = nullptr;
    const GapAnalyzer* analyzer() const
    {
        std::call_once(analyzerOnce, [this] { analyzerPtr = analysis.analyzer ? analysis.analyzer() : nullptr; });
        return analyzerPtr;
    }
    const HostAttribution* host() const
    {
        std::call_once(hostOnce, [this] { hostPtr = analysis.host ? analysis.host() : nullptr; });
        return hostPtr;
    }

    Impl(const Trace& t, TraceTables::Analysis a, Scope s)
        : trace(t)
        , analysis(std::move(a))
        , scope(s)
    {
        for (uint32_t r : trace.ranks()) {
            RankSteps& rs = ranks[r];
            rs.steps = &trace.steps(r);
            for (size_t i = 0; i < rs.steps->size(); ++i) {
                rs.starts.push_back((*rs.steps)[i].start);
                rs.ends.push_back(stepWindowEnd(*rs.steps, i));
            }
        }
        if (analysis.classifier)
            for (const auto& c : analysis.classifier->classes()) {
                std::string joined;
                for (const auto& comp : c.components)
                    joined += (joined.empty() ? "" : "+") + comp;
                classComponents.push_back(joined);
            }
    }

    bool owned(TimeNs start) const { return start >= scope.ownedFrom && start < scope.ownedTo; }
    bool stepInScope(uint32_t index) const { return index >= scope.firstStep && index <= scope.lastStep; }

    // The step of `rank` whose window holds t, or null.
    const Step* stepOf(uint32_t rank, TimeNs t) const
    {
        auto it = ranks.find(rank);
        if (it == ranks.end() || it->second.starts.empty())
            return nullptr;
        const RankSteps& rs = it->second;
        auto pos = std::upper_bound(rs.starts.begin(), rs.starts.end(), t);
        if (pos == rs.starts.begin())
            return nullptr;
        const size_t i = size_t(pos - rs.starts.begin()) - 1;
        return t < rs.ends[i] ? &(*rs.steps)[i] : nullptr;
    }

    void prepareName(StringId id) const
    {
        std::lock_guard<std::mutex> lock(namesLock);
        if (nameDone.size() < trace.stringCount()) {
            nameDone.resize(trace.stringCount(), 0);
            shortName.resize(trace.stringCount());
            nameClass.resize(trace.stringCount(), KernelClassifier::kUnclassified);
        }
        if (id >= nameDone.size() || nameDone[id])
            return;
        shortName[id] = shortKernelName(trace.str(id));
        nameClass[id]
            = analysis.classifier ? analysis.classifier->classify(trace.str(id)) : KernelClassifier::kUnclassified;
        nameDone[id] = 1;
    }

    void fillCollectiveBytes() const
    {
        for (const Lane& lane : trace.lanes()) {
            if (lane.info.kind != LaneKind::Collective)
                continue;
            for (size_t i = 0; i < lane.events.size(); ++i)
                if (const CollectiveInfo* c = trace.collective(lane.id, i); c && c->bytes)
                    collectiveBytes.emplace(std::make_pair(lane.info.rank, lane.events.start(i)), c->bytes);
        }
    }
};

namespace {

using Impl = TraceTables::Impl;

// Kernels: lane by lane in event order, or grouped by name (names ascending).
class KernelCursor final : public RowCursor {
public:
    KernelCursor(const Impl& impl, uint64_t columns, bool byName)
        : m_impl(impl)
        , m_trace(impl.trace)
        , m_byName(byName)
    {
        for (const Lane& lane : m_trace.lanes())
            if (lane.info.kind == LaneKind::GpuStream)
                m_lanes.push_back(lane.id);
        const bool ownUsed = columns & (uint64_t(1) << 11);
        m_needStep = columns & ((uint64_t(1) << 6) | (uint64_t(1) << 7));
        m_needClass = columns & ((uint64_t(1) << 12) | (uint64_t(1) << 13));
        m_needShort = columns & (uint64_t(1) << 5);
        m_needConfig
            = columns & ((uint64_t(1) << 14) | (uint64_t(1) << 15) | (uint64_t(1) << 17) | (uint64_t(1) << 18));
        m_needDims = columns & ((uint64_t(1) << 17) | (uint64_t(1) << 18));
        if (byName)
            prepareOwn(ownUsed);
        if (byName)
            sortByName();
    }

    bool next() override
    {
        if (m_byName) {
            if (m_pos == SIZE_MAX)
                m_pos = 0;
            else
                ++m_pos;
            if (m_pos >= m_order.size())
                return false;
            m_ref = m_order[m_pos];
            m_laneInfo = &m_trace.lane(m_ref.lane).info;
            m_own = m_ownOf.empty() ? 0 : m_ownOf[m_ref.lane][m_ref.index];
            return load();
        }
        for (;;) {
            if (m_laneIdx < m_lanes.size()) {
                const Lane& lane = m_trace.lane(m_lanes[m_laneIdx]);
                size_t i = m_started ? size_t(m_ref.index) + 1 : 0;
                m_started = true;
                for (; i < lane.events.size(); ++i) {
                    const TimeNs own = m_stream.duration(lane.events.start(i), lane.events.end(i));
                    if (m_trace.kindOf(lane.id, i) == EventKind::Kernel && m_impl.owned(lane.events.start(i))) {
                        m_ref = EventRef { lane.id, uint32_t(i) };
                        m_laneInfo = &lane.info;
                        m_own = m_ownOf.empty() ? own : m_ownOf[lane.id][i];
                        return load();
                    }
                }
                ++m_laneIdx;
                m_started = false;
                m_stream = OwnTime {};
                continue;
            }
            return false;
        }
    }

    Cell cell(size_t column) const override
    {
        const LaneEvents& ev = m_trace.lane(m_ref.lane).events;
        const size_t i = m_ref.index;
        switch (column) {
        case 0:
            return Cell::integer(m_capture);
        case 1:
            return Cell::integer(m_laneInfo->rank);
        case 2:
            return Cell::integer(m_laneInfo->device);
        case 3:
            return Cell::integer(int64_t(m_laneInfo->stream));
        case 4:
            return Cell::stableText(m_trace.str(ev.name(i)));
        case 5:
            return Cell::stableText(m_impl.shortName[ev.name(i)]);
        case 6:
            return m_step ? Cell::integer(m_step->index) : Cell::null();
        case 7:
            return m_step ? Cell::stableText(toString(m_step->kind)) : Cell::null();
        case 8:
            return Cell::integer(ev.start(i));
        case 9:
            return Cell::integer(ev.end(i));
        case 10:
            return Cell::integer(ev.duration(i));
        case 11:
            return Cell::integer(m_own);
        case 12: {
            const int c = m_class;
            return c >= 0 && m_impl.analysis.classifier
                ? Cell::stableText(m_impl.analysis.classifier->classes()[size_t(c)].name)
                : Cell::null();
        }
        case 13: {
            const int c = m_class;
            return c >= 0 && size_t(c) < m_impl.classComponents.size() && !m_impl.classComponents[size_t(c)].empty()
                ? Cell::stableText(m_impl.classComponents[size_t(c)])
                : Cell::null();
        }
        case 14:
            return m_config && m_config->graphId ? Cell::integer(int64_t(m_config->graphId)) : Cell::null();
        case 15:
            return m_config && m_config->graphId ? Cell::integer(int64_t(m_config->graphNodeId)) : Cell::null();
        case 16:
            return Cell::integer(ev.correlation(i));
        case 17:
            return m_config && m_config->grid[0] ? Cell::text(m_grid) : Cell::null();
        case 18:
            return m_config && m_config->block[0] ? Cell::text(m_block) : Cell::null();
        default:
            return Cell::null();
        }
    }

    void setCapture(int64_t id) { m_capture = id; }

private:
    bool load()
    {
        const StringId name = m_trace.lane(m_ref.lane).events.name(m_ref.index);
        if (m_needShort || m_needClass)
            m_impl.prepareName(name);
        m_class = m_needClass && name < m_impl.nameClass.size() ? m_impl.nameClass[name] : -1;
        m_step = m_needStep ? m_impl.stepOf(m_laneInfo->rank, m_trace.lane(m_ref.lane).events.start(m_ref.index))
                            : nullptr;
        m_config = m_needConfig ? m_trace.kernelConfig(m_ref.lane, m_ref.index) : nullptr;
        if (m_config && m_needDims) {
            m_grid = dims(m_config->grid);
            m_block = dims(m_config->block);
        }
        return true;
    }

    // Own times of every event of the kernel lanes, for an order other than the lanes' own.
    void prepareOwn(bool used)
    {
        if (!used)
            return;
        m_ownOf.resize(m_trace.laneCount());
        for (LaneId id : m_lanes) {
            const LaneEvents& ev = m_trace.lane(id).events;
            OwnTime stream;
            auto& own = m_ownOf[id];
            own.resize(ev.size());
            for (size_t i = 0; i < ev.size(); ++i)
                own[i] = stream.duration(ev.start(i), ev.end(i));
        }
    }

    // Every owned kernel, grouped by name with names in ascending byte order (a counting sort by the
    // name's rank among the names that occur).
    void sortByName()
    {
        std::vector<uint32_t> count(m_trace.stringCount() + 1, 0);
        for (LaneId id : m_lanes) {
            const LaneEvents& ev = m_trace.lane(id).events;
            for (size_t i = 0; i < ev.size(); ++i)
                if (m_trace.kindOf(id, i) == EventKind::Kernel && m_impl.owned(ev.start(i)))
                    ++count[ev.name(i)];
        }
        std::vector<StringId> names;
        for (StringId n = 0; n < m_trace.stringCount(); ++n)
            if (count[n])
                names.push_back(n);
        std::sort(
            names.begin(), names.end(), [this](StringId a, StringId b) { return m_trace.str(a) < m_trace.str(b); });
        std::vector<uint64_t> offset(m_trace.stringCount(), 0);
        uint64_t at = 0;
        for (StringId n : names) {
            offset[n] = at;
            at += count[n];
        }
        m_order.resize(size_t(at));
        for (LaneId id : m_lanes) {
            const LaneEvents& ev = m_trace.lane(id).events;
            for (size_t i = 0; i < ev.size(); ++i)
                if (m_trace.kindOf(id, i) == EventKind::Kernel && m_impl.owned(ev.start(i)))
                    m_order[size_t(offset[ev.name(i)]++)] = EventRef { id, uint32_t(i) };
        }
    }

    const Impl& m_impl;
    const Trace& m_trace;
    bool m_byName;
    bool m_needStep = true, m_needClass = true, m_needShort = true, m_needConfig = true, m_needDims = true;
    std::vector<LaneId> m_lanes;
    size_t m_laneIdx = 0;
    bool m_started = false;
    OwnTime m_stream;
    std::vector<std::vector<TimeNs>> m_ownOf; // by lane, by event (when needed)
    std::vector<EventRef> m_order;
    size_t m_pos = SIZE_MAX;
    EventRef m_ref;
    const LaneInfo* m_laneInfo = nullptr;
    TimeNs m_own = 0;
    const Step* m_step = nullptr;
    int m_class = -1;
    const KernelConfig* m_config = nullptr;
    std::string m_grid, m_block;
    int64_t m_capture = 1;
};

// Host events: the thread lanes (CPU, CUDA API, host NVTX) lane by lane.
class HostCursor final : public RowCursor {
public:
    HostCursor(const Impl& impl, int64_t capture)
        : m_impl(impl)
        , m_trace(impl.trace)
        , m_capture(capture)
    {
        for (const Lane& lane : m_trace.lanes())
            if (HostAttribution::isThreadLane(lane.info))
                m_lanes.push_back(lane.id);
    }
    bool next() override
    {
        while (m_laneIdx < m_lanes.size()) {
            const Lane& lane = m_trace.lane(m_lanes[m_laneIdx]);
            size_t i = m_started ? size_t(m_ref.index) + 1 : 0;
            m_started = true;
            for (; i < lane.events.size(); ++i)
                if (m_impl.owned(lane.events.start(i))) {
                    m_ref = EventRef { lane.id, uint32_t(i) };
                    m_step = m_impl.stepOf(lane.info.rank, lane.events.start(i));
                    return true;
                }
            ++m_laneIdx;
            m_started = false;
        }
        return false;
    }
    Cell cell(size_t column) const override
    {
        const Lane& lane = m_trace.lane(m_ref.lane);
        const LaneEvents& ev = lane.events;
        const size_t i = m_ref.index;
        switch (column) {
        case 0:
            return Cell::integer(m_capture);
        case 1:
            return Cell::integer(lane.info.rank);
        case 2:
            return Cell::integer(lane.info.pid);
        case 3:
            return Cell::integer(int64_t(lane.info.threadId()));
        case 4:
            return Cell::text(HostAttribution::hostKindName(m_trace, m_ref));
        case 5:
            return Cell::text(m_trace.str(ev.name(i)));
        case 6:
            return Cell::integer(depth());
        case 7:
            return m_step ? Cell::integer(m_step->index) : Cell::null();
        case 8:
            return Cell::integer(ev.start(i));
        case 9:
            return Cell::integer(ev.end(i));
        case 10:
            return Cell::integer(ev.duration(i));
        case 11:
            return lane.info.kind == LaneKind::CpuApi ? Cell::integer(ev.correlation(i)) : Cell::null();
        default:
            return Cell::null();
        }
    }

private:
    int64_t depth() const
    {
        const Lane& lane = m_trace.lane(m_ref.lane);
        if (lane.info.kind == LaneKind::CpuThread)
            return m_trace.hostDepth(m_ref.lane, m_ref.index);
        if (lane.info.kind == LaneKind::Nvtx)
            return m_trace.nvtxDepth(m_ref.lane, m_ref.index);
        return 0;
    }
    const Impl& m_impl;
    const Trace& m_trace;
    int64_t m_capture;
    std::vector<LaneId> m_lanes;
    size_t m_laneIdx = 0;
    bool m_started = false;
    EventRef m_ref;
    const Step* m_step = nullptr;
};

// Gaps: every idle interval of the analysed steps, rank by rank, with the host attribution of launch/host
// gaps and sync stalls. Kept as compact rows (a trace may have a gap per kernel).
class GapCursor final : public RowCursor {
public:
    GapCursor(const Impl& impl, int64_t capture)
        : m_trace(impl.trace)
        , m_capture(capture)
    {
        const GapAnalyzer* a = impl.analyzer();
        if (!a)
            return;
        std::map<std::pair<uint32_t, TimeNs>, const HostAttribution::Gap*> attributed; // by (rank, start)
        if (const HostAttribution* h = impl.host())
            for (const auto& g : h->gaps())
                attributed.emplace(std::make_pair(g.gap.rank, g.gap.start), &g);
        for (uint32_t r : a->ranks()) {
            GapAnalyzer::Selection s;
            s.kind = GapAnalyzer::Selection::Kind::Steps;
            s.rank = int(r);
            s.firstStep = impl.scope.firstStep;
            s.lastStep = impl.scope.lastStep;
            a->forEachStepGaps(s, [&](const GapAnalyzer::StepGapsView& v) {
                for (size_t k = 0; k < v.size(); ++k) {
                    const GapAnalyzer::IdleGap g = v.gap(k);
                    auto it = attributed.find({ g.rank, g.start });
                    m_rows.push_back({ g.rank, g.step, g.start, g.end, g.hasNext ? g.nextName : kNone, g.kind,
                        it != attributed.end() ? it->second : nullptr });
                }
            });
        }
    }
    bool next() override
    {
        m_row = m_row == SIZE_MAX ? 0 : m_row + 1;
        return m_row < m_rows.size();
    }
    Cell cell(size_t column) const override
    {
        const Row& r = m_rows[m_row];
        const HostAttribution::Gap* a = r.attributed;
        auto nameOf
            = [this](EventRef e) { return Cell::stableText(m_trace.str(m_trace.lane(e.lane).events.name(e.index))); };
        switch (column) {
        case 0:
            return Cell::integer(m_capture);
        case 1:
            return Cell::integer(r.rank);
        case 2:
            return Cell::integer(r.step);
        case 3:
            return Cell::stableText(idleKindName(r.kind));
        case 4:
            return Cell::integer(r.start);
        case 5:
            return Cell::integer(r.end);
        case 6:
            return Cell::integer(r.end - r.start);
        case 7:
            return r.next != kNone ? Cell::stableText(m_trace.str(r.next)) : Cell::null();
        case 8:
            return a && a->host.valid() ? nameOf(a->host) : Cell::null();
        case 9:
            return a && a->host.valid() ? Cell::stableText(HostAttribution::hostKindName(m_trace, a->host))
                                        : Cell::null();
        case 10:
            return a ? Cell::integer(a->explained) : Cell::null();
        case 11:
            return a ? Cell::integer(a->noLaunch) : Cell::null();
        case 12:
            return a ? Cell::integer(a->queued) : Cell::null();
        case 13:
            return a ? Cell::integer(a->otherThreads) : Cell::null();
        case 14:
            return a ? Cell::integer(a->nothing) : Cell::null();
        case 15:
            return a && a->syncCall.valid() ? nameOf(a->syncCall) : Cell::null();
        default:
            return Cell::null();
        }
    }

private:
    static constexpr StringId kNone = UINT32_MAX;
    struct Row {
        uint32_t rank, step;
        TimeNs start, end;
        StringId next;
        IdleKind kind;
        const HostAttribution::Gap* attributed;
    };
    const Trace& m_trace;
    int64_t m_capture;
    std::vector<Row> m_rows;
    size_t m_row = SIZE_MAX;
};

} // namespace

TraceTables::TraceTables(const Trace& trace, Analysis analysis, CaptureInfo capture, Scope scope)
    : m_trace(trace)
    , m_capture(std::move(capture))
    , m_impl(std::make_unique<Impl>(trace, std::move(analysis), scope))
{
}

TraceTables::TraceTables(const Trace& trace, Analysis analysis, CaptureInfo capture)
    : TraceTables(trace, std::move(analysis), std::move(capture), Scope {})
{
}

TraceTables::~TraceTables() = default;

void TraceTables::setRankStats(std::vector<RankStats> stats)
{
    m_impl->rankStats = std::move(stats);
}

uint64_t TraceTables::rowEstimate(TableId table) const
{
    switch (table) {
    case TableId::Kernels:
        return m_trace.eventCount(EventKind::Kernel);
    case TableId::HostEvents:
        return m_trace.eventCount(EventKind::Host) + m_trace.eventCount(EventKind::Api)
            + m_trace.eventCount(EventKind::Nvtx);
    case TableId::Steps:
    case TableId::Bars:
    case TableId::Gaps:
        return uint64_t(m_trace.stepCount()) * std::max<size_t>(1, m_trace.ranks().size())
            * (table == TableId::Steps ? 1 : 16);
    default:
        return 16;
    }
}

std::unique_ptr<RowCursor> TraceTables::open(TableId table, uint64_t columns, Order order) const
{
    const Impl& m = *m_impl;
    const TableDef& def = tableDef(table);
    const int64_t cap = m_capture.id;
    switch (table) {
    case TableId::Kernels: {
        auto c = std::make_unique<KernelCursor>(m, columns, order == Order::ByName);
        c->setCapture(cap);
        return c;
    }
    case TableId::HostEvents:
        return std::make_unique<HostCursor>(m, cap);
    case TableId::Gaps:
        return std::make_unique<GapCursor>(m, cap);
    default:
        break;
    }
    auto out = std::make_unique<MaterialCursor>(def.columns.size());
    MaterialCursor& c = *out;
    switch (table) {
    case TableId::Steps:
        for (uint32_t r : m_trace.ranks()) {
            const auto& steps = m_trace.steps(r);
            for (size_t i = 0; i < steps.size(); ++i) {
                if (!m.stepInScope(steps[i].index))
                    continue;
                const StepRow row = stepRow(m_trace, r, steps[i], stepWindowEnd(steps, i));
                c.beginRow();
                c.set(0, Cell::integer(cap));
                c.set(1, Cell::integer(r));
                c.set(2, Cell::integer(row.index));
                c.set(3, Cell::text(toString(row.kind)));
                if (!row.label.empty())
                    c.setText(4, row.label);
                c.set(5, optInt(row.batch, row.batch));
                c.set(6, optInt(row.tokens, row.tokens));
                c.set(7, Cell::integer(row.start));
                c.set(8, Cell::integer(row.start + row.window));
                c.set(9, Cell::integer(row.window));
                c.set(10, Cell::integer(row.gpuSpan));
                c.set(11, Cell::integer(row.busy));
                c.set(12, Cell::integer(int64_t(row.kernels)));
            }
        }
        break;
    case TableId::Bars: {
        const GapAnalyzer* a = m.analyzer();
        if (!a)
            break;
        for (uint32_t r : a->ranks())
            for (const auto& rec : a->steps(r)) {
                if (!m.stepInScope(rec.index))
                    continue;
                GapAnalyzer::Selection s;
                s.kind = GapAnalyzer::Selection::Kind::Step;
                s.rank = int(r);
                s.firstStep = rec.index;
                const GapAnalyzer::Breakdown b = a->analyze(s);
                const bool incomplete = a->isIncomplete(rec.index);
                for (size_t k = 0; k < b.bars.size(); ++k) {
                    c.beginRow();
                    c.set(0, Cell::integer(cap));
                    c.set(1, Cell::integer(r));
                    c.set(2, Cell::integer(rec.index));
                    c.set(3, Cell::integer(int64_t(k)));
                    c.setText(4, b.bars[k].name);
                    c.set(5, Cell::text(toString(b.bars[k].kind)));
                    c.set(6, Cell::integer(b.bars[k].ns));
                    c.set(7, Cell::real(double(b.bars[k].ns) / 1e6));
                    c.set(8, Cell::integer(incomplete));
                }
            }
        break;
    }
    case TableId::Collectives: {
        const GapAnalyzer* a = m.analyzer();
        if (!a)
            break;
        std::call_once(m.bytesOnce, [&m] { m.fillCollectiveBytes(); });
        a->forEachCollective([&](const GapAnalyzer::CollectiveRecord& rec) {
            const bool inStep = rec.step != CollectiveMatcher::kNoStep;
            if (inStep ? !m.stepInScope(rec.step) : !m.owned(rec.start))
                return;
            c.beginRow();
            c.set(0, Cell::integer(cap));
            c.set(1, Cell::integer(rec.rank));
            c.set(2, inStep ? Cell::integer(rec.step) : Cell::null());
            c.setText(3, a->collectiveOp(rec.name));
            c.set(4, Cell::text(m_trace.str(rec.name)));
            c.set(5, optInt(rec.keyed, int64_t(rec.comm)));
            c.set(6, optInt(rec.keyed, int64_t(rec.seq)));
            auto bytes = m.collectiveBytes.find({ rec.rank, rec.start });
            c.set(7, bytes != m.collectiveBytes.end() ? Cell::integer(int64_t(bytes->second)) : Cell::null());
            c.set(8, Cell::integer(rec.start));
            c.set(9, Cell::integer(rec.start + rec.duration));
            c.set(10, Cell::integer(rec.duration));
            c.set(11, Cell::integer(rec.wait));
            c.set(12, Cell::integer(rec.duration - rec.wait));
        });
        break;
    }
    case TableId::Counters:
        if (!m.scope.whole)
            break;
        for (const Counter& k : m_trace.header().counters) {
            c.beginRow();
            c.set(0, Cell::integer(cap));
            c.set(1, k.rank >= 0 ? Cell::integer(k.rank) : Cell::null());
            c.set(2, Cell::text(sv(k.name)));
            c.set(3, Cell::integer(int64_t(k.value)));
            c.set(4, Cell::text(sv(k.severity)));
            c.set(5, Cell::text(sv(k.detail)));
        }
        break;
    case TableId::Ranks: {
        if (!m.scope.whole)
            break;
        const std::vector<RankStats> all = m.rankStats ? *m.rankStats : traceStats(m_trace).ranks;
        for (const RankStats& rs : all) {
            const RankInfo* info = m_trace.header().rank(rs.rank);
            const GpuInfo* gpu = nullptr;
            for (const GpuInfo& g : m_trace.header().gpus)
                if (info
                    && ((!info->gpuUuid.empty() && g.uuid == info->gpuUuid)
                        || (info->gpuUuid.empty() && g.host == info->host && g.deviceIndex == info->deviceIndex)))
                    gpu = &g;
            c.beginRow();
            c.set(0, Cell::integer(cap));
            c.set(1, Cell::integer(rs.rank));
            if (info) {
                c.set(2, Cell::text(sv(info->host)));
                c.set(3, Cell::integer(info->pid));
                c.set(4, Cell::integer(info->deviceIndex));
                c.set(6, optInt(info->worldSize, info->worldSize));
                if (!info->processName.empty())
                    c.set(7, Cell::text(sv(info->processName)));
            }
            if (gpu)
                c.set(5, Cell::text(sv(gpu->name)));
            c.set(8, Cell::integer(rs.steps));
            c.set(9, Cell::integer(int64_t(rs.events)));
            c.set(10, Cell::integer(int64_t(rs.kernels)));
            c.set(11, Cell::integer(rs.kernelTime));
        }
        break;
    }
    case TableId::Gpus:
        if (!m.scope.whole)
            break;
        for (const GpuInfo& g : m_trace.header().gpus) {
            c.beginRow();
            c.set(0, Cell::integer(cap));
            c.set(1, Cell::text(sv(g.host)));
            c.set(2, Cell::integer(g.deviceIndex));
            c.set(3, Cell::text(sv(g.name)));
            c.set(4, Cell::text(sv(g.uuid)));
            c.set(5, optInt(g.smCount, g.smCount));
            c.set(6, optInt(g.memoryBytes, int64_t(g.memoryBytes)));
            c.set(7, optInt(g.smClockMhz, g.smClockMhz));
            c.set(8, optInt(g.memoryClockMhz, g.memoryClockMhz));
            if (g.ccMajor)
                c.setText(9, std::to_string(g.ccMajor) + "." + std::to_string(g.ccMinor));
            if (g.peakMemoryBandwidthGbs > 0)
                c.set(10, Cell::real(g.peakMemoryBandwidthGbs));
            if (!g.pciBusId.empty())
                c.set(11, Cell::text(sv(g.pciBusId)));
        }
        break;
    case TableId::Captures: {
        if (!m.scope.whole)
            break;
        const TraceHeader& h = m_trace.header();
        c.beginRow();
        c.set(0, Cell::integer(cap));
        c.set(1, Cell::text(sv(m_capture.file)));
        c.set(2, Cell::integer(int64_t(m_capture.bytes)));
        c.set(3, Cell::text(sv(h.source)));
        c.set(4, Cell::text(sv(h.toolVersion)));
        if (h.createdUnixNs > 0) {
            c.setText(5, isoTime(h.createdUnixNs));
            c.set(6, Cell::integer(h.createdUnixNs));
        }
        std::vector<std::string> hosts;
        for (const Lane& lane : m_trace.lanes())
            if (!lane.info.host.empty() && std::find(hosts.begin(), hosts.end(), lane.info.host) == hosts.end())
                hosts.push_back(lane.info.host);
        std::string joined;
        for (const auto& s : hosts)
            joined += (joined.empty() ? "" : ", ") + s;
        c.setText(7, joined);
        c.set(8, Cell::integer(int64_t(m_trace.ranks().size())));
        c.set(9, Cell::integer(m_trace.stepCount()));
        c.set(10, Cell::integer(m_trace.startTime()));
        c.set(11, Cell::integer(m_trace.endTime()));
        json::Value labels = json::Value::object();
        for (const auto& [k, v] : m_capture.labels)
            labels.set(k, v);
        c.setText(12, json::write(labels, -1));
        break;
    }
    case TableId::Labels:
        if (!m.scope.whole)
            break;
        for (const auto& [k, v] : m_capture.labels) {
            c.beginRow();
            c.set(0, Cell::integer(cap));
            c.set(1, Cell::text(sv(k)));
            c.set(2, Cell::text(sv(v)));
        }
        break;
    default:
        break;
    }
    return out;
}

} // namespace gapscope::model::sql
