// SPDX-License-Identifier: MIT
#include "model/import/kinetoevents.h"

#include "model/import/decimal.h"

#include <cstring>

namespace gapscope::model::importer {

namespace od = simdjson::ondemand;

namespace {

enum Category : int {
    kKernel,
    kMemcpy,
    kMemset,
    kRuntime,
    kDriver,
    kSync,
    kUserAnnotation,
    kGpuUserAnnotation,
    kCpuOp,
    kPython,
    kFlow,
    kSkipped,
    kUnknown
};

// Streams of GPU-side annotation lanes carry this bit so they never share a key with a host thread id.
constexpr uint64_t kGpuRangeBit = 1ull << 32;
constexpr uint64_t kSyncLaneStream = ~0ull;

// Keys are compared on simdjson's raw key text, closing quote included ("ph\"").
template <size_t N>
inline bool keyIs(const char* raw, const char (&lit)[N])
{
    return std::memcmp(raw, lit, N - 1) == 0;
}

inline bool isDataError(simdjson::error_code e)
{
    return e == simdjson::INCORRECT_TYPE || e == simdjson::NUMBER_ERROR || e == simdjson::NUMBER_OUT_OF_RANGE;
}

// A raw string token ("X"  ) without its quotes and trailing blanks; empty if not a plain string.
std::string_view unquote(std::string_view t)
{
    while (!t.empty() && (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' || t.back() == '\t'))
        t.remove_suffix(1);
    if (t.size() < 2 || t.front() != '"' || t.back() != '"')
        return {};
    return t.substr(1, t.size() - 2);
}

Category classify(std::string_view c)
{
    switch (c.size()) {
    case 4:
        return c == "ac2g" ? kFlow : kUnknown;
    case 5:
        return c == "Trace" ? kSkipped : kUnknown;
    case 6:
        if (c == "kernel" || c == "Kernel")
            return kKernel;
        if (c == "cpu_op")
            return kCpuOp;
        if (c == "Memcpy")
            return kMemcpy;
        if (c == "Memset")
            return kMemset;
        if (c == "Driver")
            return kDriver;
        return c == "python" ? kPython : kUnknown;
    case 7:
        return c == "Runtime" ? kRuntime : kUnknown;
    case 8:
        if (c == "overhead")
            return kSkipped;
        return c == "Operator" ? kCpuOp : kUnknown;
    case 9:
        return c == "cuda_sync" ? kSync : kUnknown;
    case 10:
        if (c == "gpu_memcpy")
            return kMemcpy;
        if (c == "gpu_memset")
            return kMemset;
        return kUnknown;
    case 11:
        return c == "cuda_driver" ? kDriver : kUnknown;
    case 12:
        return c == "cuda_runtime" ? kRuntime : kUnknown;
    case 15:
        if (c == "user_annotation")
            return kUserAnnotation;
        return c == "python_function" ? kPython : kUnknown;
    case 17:
        return c == "cpu_instant_event" ? kSkipped : kUnknown;
    case 19:
        return c == "gpu_user_annotation" ? kGpuUserAnnotation : kUnknown;
    default:
        return kUnknown;
    }
}

pb::CopyKind copyKindOf(std::string_view name)
{
    if (name.find("HtoD") != std::string_view::npos)
        return pb::COPY_HTOD;
    if (name.find("DtoH") != std::string_view::npos)
        return pb::COPY_DTOH;
    if (name.find("DtoD") != std::string_view::npos)
        return pb::COPY_DTOD;
    if (name.find("HtoH") != std::string_view::npos)
        return pb::COPY_HTOH;
    if (name.find("PtoP") != std::string_view::npos)
        return pb::COPY_PTOP;
    return pb::COPY_UNKNOWN;
}

pb::SyncKind syncKindOf(std::string_view name)
{
    if (name == "Stream Wait Event")
        return pb::SYNC_STREAM_WAIT_EVENT;
    if (name == "Stream Sync")
        return pb::SYNC_STREAM;
    if (name == "Event Sync")
        return pb::SYNC_EVENT;
    if (name == "Context Sync")
        return pb::SYNC_CONTEXT;
    return pb::SYNC_UNKNOWN;
}

// Bytes per element of the dtype names torch writes in collective args ("BFloat16", "Float", ...).
uint64_t dtypeBytes(std::string_view t)
{
    if (t == "Float" || t == "Int" || t == "UInt32" || t == "float" || t == "int32")
        return 4;
    if (t == "Double" || t == "Long" || t == "ComplexFloat" || t == "UInt64" || t == "int64")
        return 8;
    if (t == "BFloat16" || t == "Half" || t == "Short" || t == "bfloat16" || t == "float16")
        return 2;
    if (t == "ComplexDouble")
        return 16;
    return 1; // Byte, Char, Bool, the float8 types
}

uint64_t hashText(std::string_view s)
{
    return StringPool::hash(s);
}

} // namespace

struct KinetoEventParser::Raw {
    std::string_view ph, cat, name, bp, tidText, collective, dtype, pgName, metaName, labels;
    int64_t ts = 0, dur = -1, pid = 0, tid = 0, id = 0;
    bool hasTs = false, hasPid = false, hasTid = false, hasId = false, pidString = false, tidString = false;
    int64_t device = -1, stream = -1, correlation = 0, bytes = -1, registers = 0, sharedMemory = 0;
    int64_t graphId = 0, graphNodeId = 0, nelems = -1, waitStream = -1;
    uint32_t grid[3] = { 0, 0, 0 };
    uint32_t block[3] = { 0, 0, 0 };
    const char* bad = nullptr;
};

KinetoEventParser::KinetoEventParser(StagedTrace& out)
    : m_out(out)
{
    m_process = m_out.addProcess(StagedProcess {});
    m_out.metadata["source"] = "kineto";
}

void KinetoEventParser::tally(std::map<std::string, uint64_t, std::less<>>& m, std::string_view key)
{
    auto it = m.find(key);
    if (it == m.end())
        it = m.emplace(std::string(key), 0).first;
    ++it->second;
}

// Value readers: false only on a structural error (m_error set); a value of another type is ignored.
bool KinetoEventParser::readToken(od::value& v, std::string_view& out)
{
    out = v.raw_json_token(); // cannot fail: the token is where the iterator stands
    return true;
}

bool KinetoEventParser::readInt(od::value& v, int64_t& out)
{
    std::string_view t;
    if (!readToken(v, t))
        return false;
    int64_t x;
    if (parseInteger(t, x))
        out = x;
    return true;
}

// Strings without escapes (nearly all: kernel names, categories) are used in place in the input; the
// others are unescaped by simdjson.
bool KinetoEventParser::readString(od::value& v, std::string_view& out)
{
    const std::string_view t = unquote(v.raw_json_token());
    if (!t.empty() && std::memchr(t.data(), '\\', t.size()) == nullptr) {
        out = t;
        return true;
    }
    auto e = v.get_string().get(out);
    if (e && !isDataError(e)) {
        m_error = e;
        return false;
    }
    return true;
}

// pid / tid: numbers, or strings ("Spans", "stream 7") identified by their hash.
bool KinetoEventParser::readId(od::value& v, int64_t& id, bool& isString)
{
    std::string_view t;
    if (!readToken(v, t))
        return false;
    if (parseInteger(t, id)) {
        isString = false;
        return true;
    }
    std::string_view s = unquote(t);
    isString = true;
    if (s.rfind("stream ", 0) == 0 && parseInteger(s.substr(7), id)) // older Kineto: "tid": "stream 7"
        isString = false;
    else
        id = static_cast<int64_t>(hashText(s) & 0x7FFFFFFFFFFFFFFFull);
    return true;
}

bool KinetoEventParser::readDim(od::value& v, uint32_t (&dim)[3])
{
    od::array a;
    auto e = v.get_array().get(a);
    if (e)
        return isDataError(e) || (m_error = e, false);
    size_t i = 0;
    for (auto item : a) {
        int64_t x = 0;
        if (auto ie = item.get_int64().get(x); ie && !isDataError(ie)) {
            m_error = ie;
            return false;
        }
        if (i < 3)
            dim[i++] = static_cast<uint32_t>(x);
    }
    return true;
}

bool KinetoEventParser::readFields(od::object& obj, Raw& r)
{
    for (auto fieldResult : obj) {
        od::field field;
        if (auto e = std::move(fieldResult).get(field)) {
            m_error = e;
            return false;
        }
        if (!readField(field.key().raw(), field.value(), r))
            return false;
    }
    return true;
}

bool KinetoEventParser::readField(const char* k, od::value v, Raw& r)
{
    std::string_view t;
    switch (k[0]) {
    case 'p':
        if (keyIs(k, "ph\""))
            r.ph = unquote(v.raw_json_token());
        else if (keyIs(k, "pid\""))
            r.hasPid = readId(v, r.pid, r.pidString);
        return true;
    case 'c':
        if (keyIs(k, "cat\""))
            r.cat = unquote(v.raw_json_token());
        return true;
    case 'n':
        return keyIs(k, "name\"") ? readString(v, r.name) : true;
    case 't':
        if (keyIs(k, "ts\"")) {
            t = v.raw_json_token();
            r.hasTs = parseMicrosToNanos(t.front() == '"' ? unquote(t) : t, r.ts);
            r.bad = r.hasTs ? r.bad : "unreadable ts";
        } else if (keyIs(k, "tid\"")) {
            r.hasTid = readId(v, r.tid, r.tidString);
        }
        return true;
    case 'd':
        if (keyIs(k, "dur\"")) {
            t = v.raw_json_token();
            if (!parseMicrosToNanos(t.front() == '"' ? unquote(t) : t, r.dur))
                r.bad = "unreadable dur";
        }
        return true;
    case 'a':
        return keyIs(k, "args\"") ? readArgs(v, r) : true;
    case 'i':
        if (keyIs(k, "id\""))
            r.hasId = readInt(v, r.id);
        return true;
    case 'b':
        if (keyIs(k, "bp\""))
            r.bp = unquote(v.raw_json_token());
        return true;
    default:
        return true;
    }
}

bool KinetoEventParser::readArgs(od::value v, Raw& r)
{
    od::object args;
    if (auto e = v.get_object().get(args))
        return isDataError(e) || (m_error = e, false);
    for (auto fieldResult : args) {
        od::field field;
        if (auto e = std::move(fieldResult).get(field)) {
            m_error = e;
            return false;
        }
        if (!readArgsField(field.key().raw(), field.value(), r))
            return false;
    }
    return true;
}

bool KinetoEventParser::readArgsField(const char* k, od::value v, Raw& r)
{
    switch (k[0]) {
    case 'd':
        if (keyIs(k, "device\""))
            return readInt(v, r.device);
        if (keyIs(k, "dtype\""))
            return readString(v, r.dtype);
        return true;
    case 's':
        if (keyIs(k, "stream\""))
            return readInt(v, r.stream);
        if (keyIs(k, "shared memory\""))
            return readInt(v, r.sharedMemory);
        return true;
    case 'c':
        return keyIs(k, "correlation\"") ? readInt(v, r.correlation) : true;
    case 'r':
        return keyIs(k, "registers per thread\"") ? readInt(v, r.registers) : true;
    case 'g':
        if (keyIs(k, "grid\""))
            return readDim(v, r.grid);
        if (keyIs(k, "graph id\"") || keyIs(k, "graph_id\""))
            return readInt(v, r.graphId);
        if (keyIs(k, "graph node id\""))
            return readInt(v, r.graphNodeId);
        return true;
    case 'b':
        if (keyIs(k, "block\""))
            return readDim(v, r.block);
        return keyIs(k, "bytes\"") ? readInt(v, r.bytes) : true;
    case 'C':
        return keyIs(k, "Collective name\"") ? readString(v, r.collective) : true;
    case 'I':
        return keyIs(k, "In msg nelems\"") ? readInt(v, r.nelems) : true;
    case 'P':
        return keyIs(k, "Process Group Name\"") ? readString(v, r.pgName) : true;
    case 'n':
        return keyIs(k, "name\"") ? readString(v, r.metaName) : true;
    case 'l':
        return keyIs(k, "labels\"") ? readString(v, r.labels) : true;
    case 'w':
        return keyIs(k, "wait_on_stream\"") ? readInt(v, r.waitStream) : true;
    default:
        return true;
    }
}

KinetoEventParser::Result KinetoEventParser::parse(od::value element)
{
    od::object obj;
    if (auto e = element.get_object().get(obj)) {
        if (!isDataError(e)) {
            m_error = e;
            return Result::JsonError;
        }
        tally(m_bad, "traceEvents element that is not an object");
        return Result::Bad;
    }
    Raw r;
    if (!readFields(obj, r))
        return Result::JsonError;
    return dispatch(r);
}

KinetoEventParser::Result KinetoEventParser::dispatch(Raw& r)
{
    if (r.bad) {
        tally(m_bad, r.bad);
        return Result::Bad;
    }
    if (r.ph.size() != 1) {
        tally(m_unknown, r.ph.empty() ? std::string_view("event without ph") : r.ph);
        return Result::Ok;
    }
    const Category cat = classify(r.cat);
    switch (r.ph[0]) {
    case 'X':
        break;
    case 'M':
        addMetadata(r);
        return Result::Ok;
    case 's':
    case 'f':
    case 't':
        if (cat == kFlow)
            addFlow(r);
        else
            tally(m_skipped, "flow events");
        return Result::Ok;
    case 'i':
    case 'I':
    case 'C':
        tally(m_skipped, r.ph[0] == 'C' ? "counter events" : "instant events");
        return Result::Ok;
    default:
        tally(m_unknown, std::string("ph=") + std::string(r.ph));
        return Result::Ok;
    }
    if (!r.hasTs) {
        tally(m_bad, "complete event without ts");
        return Result::Bad;
    }
    if (r.dur < 0)
        r.dur = 0;
    if (cat == kSkipped) {
        tally(m_skipped, r.cat);
    } else if (cat == kUnknown || cat == kFlow) {
        tally(m_unknown, r.cat.empty() ? std::string_view("event without cat") : r.cat);
    } else if (cat == kCpuOp || cat == kPython) {
        tally(m_skipped, r.cat); // operator and Python frames: see the header comment
    } else if (cat == kKernel || cat == kMemcpy || cat == kMemset || cat == kSync || cat == kGpuUserAnnotation) {
        addGpuEvent(r, cat);
    } else {
        addCpuEvent(r, cat);
    }
    return Result::Ok;
}

uint32_t KinetoEventParser::laneFor(
    LaneMap& map, LaneKind kind, int64_t a, int64_t b, uint32_t device, uint64_t stream)
{
    auto it = map.find({ a, b });
    if (it != map.end())
        return it->second;
    const uint32_t lane = m_out.lane(m_process, kind, device, stream);
    map.emplace(std::make_pair(a, b), lane);
    return lane;
}

void KinetoEventParser::noteHostPid(int64_t pid)
{
    if (m_hostPidKnown)
        return;
    m_hostPidKnown = true;
    m_out.process(m_process).pid = static_cast<uint32_t>(pid);
}

void KinetoEventParser::addGpuEvent(Raw& r, int cat)
{
    const int64_t device = r.device >= 0 ? r.device : (r.hasPid && !r.pidString ? r.pid : 0);
    const int64_t stream = r.stream >= 0 ? r.stream : (r.hasTid ? r.tid : 0);
    const auto dev = static_cast<uint32_t>(device);
    auto& proc = m_out.process(m_process);
    if (!proc.device && cat != kSync)
        proc.device = dev;
    const uint32_t name = m_out.strings().intern(r.name);
    const auto corr = static_cast<uint32_t>(r.correlation);
    uint32_t lane;
    if (cat == kKernel) {
        lane = laneFor(m_gpuLanes, LaneKind::GpuStream, device, stream, dev, uint64_t(stream));
        if (lane == StagedTrace::kNoLane)
            return;
        KernelConfig c;
        std::copy(r.grid, r.grid + 3, c.grid);
        std::copy(r.block, r.block + 3, c.block);
        c.registers = static_cast<uint32_t>(r.registers);
        c.sharedDynamic = static_cast<uint32_t>(r.sharedMemory); // Kineto reports static + dynamic as one sum
        c.graphId = static_cast<uint64_t>(r.graphId);
        c.graphNodeId = static_cast<uint64_t>(r.graphNodeId);
        m_out.addKernel(lane, r.ts, r.dur, name, corr, m_out.config(c));
        if (!r.collective.empty()) {
            CollectiveInfo info;
            info.bytes = r.nelems > 0 ? uint64_t(r.nelems) * dtypeBytes(r.dtype) : 0;
            info.datatype = m_out.strings().intern(r.dtype);
            info.comm = r.pgName.empty() ? 0 : hashText(r.pgName);
            const uint32_t cl = laneFor(m_collLanes, LaneKind::Collective, device, 0, dev, 0);
            if (cl != StagedTrace::kNoLane)
                m_out.addCollective(cl, r.ts, r.dur, m_out.strings().intern(r.collective), info);
        }
        return;
    }
    if (cat == kMemcpy || cat == kMemset) {
        lane = laneFor(m_gpuLanes, LaneKind::GpuStream, device, stream, dev, uint64_t(stream));
        if (lane == StagedTrace::kNoLane)
            return;
        MemopInfo info;
        info.kind = cat == kMemset ? pb::MEMOP_MEMSET : pb::MEMOP_MEMCPY;
        info.copyKind = cat == kMemcpy ? copyKindOf(r.name) : pb::COPY_UNKNOWN;
        info.bytes = r.bytes > 0 ? uint64_t(r.bytes) : 0;
        m_out.addMemop(lane, r.ts, r.dur, name, corr, info);
        return;
    }
    if (cat == kGpuUserAnnotation) {
        lane = laneFor(m_gpuRangeLanes, LaneKind::Nvtx, device, stream, dev, kGpuRangeBit | uint64_t(stream));
        if (lane != StagedTrace::kNoLane)
            m_out.addRange(lane, r.ts, r.dur, name);
        return;
    }
    lane = laneFor(m_syncLanes, LaneKind::CpuApi, device, 0, dev, kSyncLaneStream); // cuda_sync
    if (lane == StagedTrace::kNoLane)
        return;
    SyncInfo info;
    info.kind = syncKindOf(r.name);
    info.stream = static_cast<uint64_t>(r.waitStream >= 0 ? r.waitStream : stream);
    m_out.addSync(lane, r.ts, r.dur, name, corr, info);
}

void KinetoEventParser::addCpuEvent(Raw& r, int cat)
{
    noteHostPid(r.pid);
    const auto tid = static_cast<uint64_t>(r.tid);
    const uint32_t name = m_out.strings().intern(r.name);
    if (cat == kRuntime || cat == kDriver) {
        const uint32_t lane = laneFor(m_apiLanes, LaneKind::CpuApi, r.pid, r.tid, 0, tid);
        if (lane != StagedTrace::kNoLane)
            m_out.addApi(lane, r.ts, r.dur, name, static_cast<uint32_t>(r.correlation),
                cat == kDriver ? ApiKind::Driver : ApiKind::Runtime);
        return;
    }
    const uint32_t lane = laneFor(m_rangeLanes, LaneKind::Nvtx, r.pid, r.tid, 0, tid);
    if (lane != StagedTrace::kNoLane)
        m_out.addRange(lane, r.ts, r.dur, name);
}

// An ac2g flow end ("f") sits on the GPU event it points to, at the same time: it names that event's
// correlation id when the event's args did not.
void KinetoEventParser::addFlow(const Raw& r)
{
    if (r.ph[0] != 'f' || !r.hasId || !r.hasTs)
        return;
    auto it = m_gpuLanes.find({ r.pid, r.tid });
    if (it == m_gpuLanes.end() || it->second == StagedTrace::kNoLane)
        return; // a flow into a host-side event: nothing to correlate
    const uint64_t last = m_out.lastEventOf(it->second);
    if (last != UINT64_MAX) {
        StagedEvent& e = m_out.event(last);
        if (e.start == r.ts && (e.correlation == 0 || e.correlation == uint32_t(r.id))) {
            m_flowsMatched += e.correlation == 0 ? 1 : 0;
            e.correlation = static_cast<uint32_t>(r.id);
            return;
        }
    }
    ++m_flowsUnmatched;
}

void KinetoEventParser::addMetadata(const Raw& r)
{
    if (r.name == "thread_name" && !r.metaName.empty())
        m_threadNames[r.tid] = std::string(r.metaName);
    else if (r.name == "process_name" && !r.metaName.empty())
        m_processNames[r.pid] = std::string(r.metaName);
    else if (r.name == "process_labels" && r.labels == "CPU" && !r.pidString)
        noteHostPid(r.pid);
}

} // namespace gapscope::model::importer

namespace gapscope::model::importer {

namespace {
std::string threadLabel(const std::unordered_map<int64_t, std::string>& names, uint64_t tid)
{
    auto it = names.find(static_cast<int64_t>(tid));
    const std::string plain = "thread " + std::to_string(tid);
    if (it == names.end() || it->second.empty() || it->second == std::to_string(tid))
        return plain;
    if (it->second.rfind(plain, 0) == 0) // Kineto already names it "thread 831 (python3)"
        return it->second;
    return plain + " (" + it->second + ")";
}
} // namespace

void KinetoEventParser::finish()
{
    for (uint32_t i = 0; i < m_out.lanes().size(); ++i) {
        LaneInfo& info = m_out.laneAt(i).info;
        const uint64_t s = info.stream;
        switch (info.kind) {
        case LaneKind::GpuStream:
            info.name = "stream " + std::to_string(s);
            break;
        case LaneKind::Nvtx:
            info.name = (s & kGpuRangeBit) ? "stream " + std::to_string(s & 0xFFFFFFFFull) + " annotations"
                                           : threadLabel(m_threadNames, s);
            break;
        case LaneKind::CpuApi:
            info.name = s == kSyncLaneStream ? "CUDA synchronization" : threadLabel(m_threadNames, s) + " CUDA API";
            break;
        case LaneKind::Collective:
            info.name = "collectives";
            break;
        default:
            break;
        }
    }
    auto it = m_processNames.find(m_out.process(m_process).pid);
    if (it != m_processNames.end())
        m_out.process(m_process).name = it->second;
    for (const auto& [k, n] : m_skipped)
        m_out.count("import_skipped_events", "info", k, n);
    for (const auto& [k, n] : m_unknown)
        m_out.count("import_unknown_event_kinds", "warning", k, n);
    for (const auto& [k, n] : m_bad)
        m_out.count("import_bad_events", "warning", k, n);
    if (m_flowsMatched)
        m_out.count("import_flow_correlations", "info", "GPU events whose correlation came from an ac2g flow",
            m_flowsMatched);
    if (m_flowsUnmatched)
        m_out.count("import_unmatched_flows", "info", "ac2g flow ends with no GPU event at their time",
            m_flowsUnmatched);
}

} // namespace gapscope::model::importer
