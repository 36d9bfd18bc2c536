// SPDX-License-Identifier: MIT
#include "model/import/rocprofjsonrecords.h"

#include "model/import/decimal.h"

#include <simdjson.h>

#include <initializer_list>
#include <unordered_map>
#include <vector>

namespace gapscope::model::importer {

namespace od = simdjson::ondemand;

namespace {

constexpr int64_t kGpuAgent = 2; // rocprofiler_agent_type_t: ROCPROFILER_AGENT_TYPE_GPU

// What went wrong in a record: the field's path and why; empty while all is well.
struct Problem {
    std::string text;
    bool operator()(std::string_view field, const std::string& why)
    {
        if (text.empty())
            text = std::string(field) + ": " + why;
        return false;
    }
    bool operator()(std::string_view field, simdjson::error_code e)
    {
        return (*this)(field, std::string(simdjson::error_message(e)));
    }
};

// Calls `each(key, value)` for every member of the object `v`; stops when it returns false.
template <typename F> bool members(od::value v, std::string_view what, Problem& problem, F&& each)
{
    od::object object;
    if (auto e = v.get_object().get(object))
        return problem(what, e == simdjson::INCORRECT_TYPE ? std::string("not an object") : simdjson::error_message(e));
    for (auto result : object) {
        od::field field;
        std::string_view key;
        if (auto e = std::move(result).get(field))
            return problem(what, e);
        if (auto e = field.unescaped_key().get(key))
            return problem(what, e);
        if (!each(key, field.value()))
            return false;
    }
    return true;
}

bool integer(od::value v, std::string_view field, Problem& problem, int64_t& out)
{
    if (parseInteger(v.raw_json_token(), out))
        return true;
    return problem(field, "not an integer");
}

bool text(od::value v, std::string_view field, Problem& problem, std::string_view& out)
{
    if (auto e = v.get_string().get(out))
        return problem(field, e == simdjson::INCORRECT_TYPE ? std::string("not a string") : simdjson::error_message(e));
    return true;
}

// An integer member by name: `key` read into the field of `fields` named so (its path in problems is
// `prefix` + name); true, reading nothing, when none is.
struct IntField {
    const char* name;
    int64_t* to;
};
bool intField(
    std::string_view key, od::value v, std::initializer_list<IntField> fields, const char* prefix, Problem& problem)
{
    for (const IntField& f : fields)
        if (key == f.name)
            return integer(v, std::string(prefix) + f.name, problem, *f.to);
    return true;
}

// {"handle": N}: rocprofiler-sdk's ids of agents, queues and streams.
bool handle(od::value v, std::string_view field, Problem& problem, int64_t& out)
{
    return members(v, field, problem,
        [&](std::string_view key, od::value h) { return key != "handle" || integer(h, field, problem, out); });
}

// {"x": .., "y": .., "z": ..}
bool dim3(od::value v, std::string_view field, Problem& problem, int64_t (&out)[3])
{
    return members(v, field, problem, [&](std::string_view key, od::value d) {
        const int i = key == "x" ? 0 : key == "y" ? 1 : key == "z" ? 2 : -1;
        return i < 0 || integer(d, field, problem, out[i]);
    });
}

// The first memory bank: size, clock and bus width.
bool memoryBank(od::value v, Problem& problem, RocprofAgentRow& a)
{
    od::array banks;
    if (v.get_array().get(banks))
        return problem("mem_banks", "not an array");
    bool first = true;
    for (auto bank : banks) {
        od::value b;
        if (auto e = bank.get(b))
            return problem("mem_banks", e);
        if (!first)
            continue;
        first = false;
        bool ok = members(b, "mem_banks", problem, [&](std::string_view key, od::value x) {
            return intField(key, x,
                { { "size_in_bytes", &a.memoryBytes }, { "mem_clk_max", &a.memoryClockMhz },
                    { "width", &a.memoryBusBits } },
                "mem_banks[0].", problem);
        });
        if (!ok)
            return false;
    }
    return true;
}

} // namespace

struct RocprofJsonRecords::Impl {
    Impl(StagedTrace& o, RocprofRowConverter& r)
        : out(o)
        , rows(r)
    {
    }
    bool metadata(od::value v, Problem& p);
    bool strings(od::value v, Problem& p);
    bool agent(od::value v, Problem& p);
    bool kernelSymbol(od::value v, Problem& p);
    bool dispatch(od::value v, Problem& p);
    bool dispatchInfo(od::value v, Problem& p, RocprofDispatchRow& r, int64_t& kernelId);
    bool hipApi(od::value v, Problem& p);
    bool memoryCopy(od::value v, Problem& p);
    bool marker(od::value v, Problem& p);
    bool markerTexts(od::value v, Problem& p);
    bool common(std::string_view key, od::value v, Problem& p, int64_t& kind, int64_t& op, int64_t& tid,
        int64_t& correlation, int64_t& start, int64_t& end, int& seen);
    bool times(std::string_view key, od::value v, Problem& p, int64_t& start, int64_t& end, int& seen);
    uint32_t kernelName(int64_t kernelId);
    std::string_view operation(int64_t kind, int64_t op, const char* what = "HIP API");

    StagedTrace& out;
    RocprofRowConverter& rows;
    simdjson::ondemand::parser parser;
    // The process being read.
    int64_t pid = 0;
    std::unordered_map<int64_t, uint32_t> symbols; // kernel id -> kernel name
    std::vector<std::vector<std::string>> operations; // buffer record kind -> operation names
    std::vector<std::pair<uint64_t, int64_t>> unnamed; // staged event -> kernel id not known yet
    std::unordered_map<int64_t, std::string> markerTexts_; // correlation id -> ROCTx message
    std::string scratch;
    uint64_t unknownOperations = 0, unnamedMarkers = 0;
};

RocprofJsonRecords::RocprofJsonRecords(StagedTrace& out, RocprofRowConverter& rows)
    : m_impl(std::make_unique<Impl>(out, rows))
{
}

RocprofJsonRecords::~RocprofJsonRecords() = default;

void RocprofJsonRecords::beginProcess()
{
    m_impl->pid = 0;
    m_impl->symbols.clear();
    m_impl->operations.clear();
    m_impl->unnamed.clear();
    m_impl->markerTexts_.clear();
}

void RocprofJsonRecords::endProcess()
{
    Impl& d = *m_impl;
    uint64_t missing = 0;
    for (const auto& [event, kernelId] : d.unnamed) {
        auto it = d.symbols.find(kernelId);
        if (it != d.symbols.end())
            d.out.event(event).name = it->second;
        else
            ++missing;
    }
    if (missing)
        d.out.count(
            format::Stat::ImportMissingStrings, "kernel dispatches whose kernel_id has no kernel symbol", missing);
    if (d.unknownOperations)
        d.out.count(format::Stat::ImportUnknownApiIds,
            "HIP API, memory copy and ROCTx records whose operation the strings do not name", d.unknownOperations);
    if (d.unnamedMarkers)
        d.out.count(format::Stat::ImportMissingStrings,
            "ROCTx markers without a message in strings.marker_api (named by their operation)", d.unnamedMarkers);
    d.unknownOperations = 0;
    d.unnamedMarkers = 0;
    d.unnamed.clear();
}

bool RocprofJsonRecords::parse(Kind kind, const char* data, size_t n, size_t capacity, std::string& error)
{
    Impl& d = *m_impl;
    Problem problem;
    od::document doc;
    od::value v;
    if (auto e = d.parser.iterate(data, n, capacity).get(doc); e || (e = doc.get_value().get(v))) {
        error = simdjson::error_message(e);
        return false;
    }
    using Parse = bool (Impl::*)(od::value, Problem&);
    static constexpr Parse kParsers[] = { &Impl::metadata, &Impl::strings, &Impl::agent, &Impl::kernelSymbol,
        &Impl::dispatch, &Impl::hipApi, &Impl::memoryCopy, &Impl::marker }; // in the order of Kind
    static_assert(sizeof kParsers / sizeof kParsers[0] == size_t(Kind::Marker) + 1, "a parser for every Kind");
    const bool ok = (d.*kParsers[size_t(kind)])(v, problem);
    error = problem.text;
    return ok && error.empty();
}

bool RocprofJsonRecords::Impl::metadata(od::value v, Problem& p)
{
    std::string_view host;
    std::string command;
    bool ok = members(v, "metadata", p, [&](std::string_view key, od::value x) {
        if (key == "pid")
            return integer(x, "metadata.pid", p, pid);
        if (key == "node")
            return members(x, "metadata.node", p, [&](std::string_view k, od::value y) {
                if (k != "hostname")
                    return true;
                std::string_view h;
                return text(y, "metadata.node.hostname", p, h) && (scratch.assign(h), host = scratch, true);
            });
        if (key != "command")
            return true;
        od::array args;
        if (x.get_array().get(args))
            return p("metadata.command", "not an array");
        for (auto arg : args) {
            std::string_view a;
            if (!arg.get_string().get(a))
                command += (command.empty() ? "" : " ") + std::string(a);
        }
        return true;
    });
    if (ok)
        rows.process(pid, command, host);
    return ok;
}

bool RocprofJsonRecords::Impl::strings(od::value v, Problem& p)
{
    return members(v, "strings", p, [&](std::string_view key, od::value x) {
        if (key == "marker_api")
            return markerTexts(x, p);
        if (key != "buffer_records")
            return true;
        od::array kinds;
        if (x.get_array().get(kinds))
            return p("strings.buffer_records", "not an array");
        operations.clear();
        for (auto kind : kinds) {
            std::vector<std::string>& names = operations.emplace_back();
            od::value k;
            if (kind.get(k))
                return p("strings.buffer_records", "unreadable");
            bool ok = members(k, "strings.buffer_records", p, [&](std::string_view f, od::value ops) {
                od::array list;
                if (f != "operations")
                    return true;
                if (ops.get_array().get(list))
                    return p("strings.buffer_records.operations", "not an array");
                for (auto op : list) {
                    std::string_view name;
                    names.emplace_back(op.get_string().get(name) ? std::string_view() : name);
                }
                return true;
            });
            if (!ok)
                return false;
        }
        return true;
    });
}

// strings.marker_api: [{"key": correlation id, "value": the ROCTx message}].
bool RocprofJsonRecords::Impl::markerTexts(od::value v, Problem& p)
{
    od::array list;
    if (v.get_array().get(list))
        return p("strings.marker_api", "not an array");
    for (auto item : list) {
        od::value x;
        if (item.get(x))
            return p("strings.marker_api", "unreadable");
        int64_t key = -1;
        std::string_view value;
        bool hasValue = false;
        bool ok = members(x, "strings.marker_api", p, [&](std::string_view k, od::value y) {
            if (k == "key")
                return integer(y, "strings.marker_api.key", p, key);
            if (k == "value")
                return (hasValue = true, text(y, "strings.marker_api.value", p, value));
            return true;
        });
        if (!ok)
            return false;
        if (key >= 0 && hasValue)
            markerTexts_[key] = std::string(value);
    }
    return true;
}

bool RocprofJsonRecords::Impl::agent(od::value v, Problem& p)
{
    RocprofAgentRow a;
    int64_t type = 0, logical = -1, gpuIndex = -1;
    bool ok = members(v, "agent", p, [&](std::string_view key, od::value x) {
        if (key == "id")
            return handle(x, "id", p, a.handle);
        if (key == "product_name")
            return text(x, key, p, a.productName);
        if (key == "name")
            return text(x, key, p, a.arch);
        if (key == "mem_banks")
            return memoryBank(x, p, a);
        return intField(key, x,
            { { "type", &type }, { "gpu_index", &gpuIndex }, { "logical_node_type_id", &logical },
                { "cu_count", &a.computeUnits }, { "max_engine_clk_fcompute", &a.clockMhz }, { "domain", &a.pciDomain },
                { "location_id", &a.pciLocation } },
            "", p);
    });
    if (!ok)
        return false;
    if (type == kGpuAgent)
        a.gpuIndex = gpuIndex >= 0 ? gpuIndex : logical;
    // The strings are views into the parser's buffer, valid until the next record: used right away.
    rows.agent(a);
    return true;
}

bool RocprofJsonRecords::Impl::kernelSymbol(od::value v, Problem& p)
{
    int64_t id = -1;
    std::string_view name;
    bool ok = members(v, "kernel symbol", p, [&](std::string_view key, od::value x) {
        if (key == "kernel_id")
            return integer(x, key, p, id);
        if (key == "kernel_name")
            return text(x, key, p, name);
        return true;
    });
    if (!ok)
        return false;
    if (id < 0)
        return p("kernel_id", "missing");
    symbols[id] = rows.kernelName(name);
    return true;
}

uint32_t RocprofJsonRecords::Impl::kernelName(int64_t kernelId)
{
    auto it = symbols.find(kernelId);
    if (it != symbols.end())
        return it->second;
    unnamed.emplace_back(out.eventCount(), kernelId);
    return out.strings().intern("<kernel " + std::to_string(kernelId) + ">");
}

// start_timestamp / end_timestamp; `seen` gets bit 1 and 2.
bool RocprofJsonRecords::Impl::times(
    std::string_view key, od::value v, Problem& p, int64_t& start, int64_t& end, int& seen)
{
    if (key == "start_timestamp") {
        seen |= 1;
        return integer(v, key, p, start);
    }
    if (key == "end_timestamp") {
        seen |= 2;
        return integer(v, key, p, end);
    }
    return true;
}

bool RocprofJsonRecords::Impl::dispatch(od::value v, Problem& p)
{
    RocprofDispatchRow r;
    r.pid = pid;
    int64_t kernelId = -1;
    int seen = 0;
    bool ok = members(v, "kernel_dispatch", p, [&](std::string_view key, od::value x) {
        if (key == "thread_id")
            return integer(x, key, p, r.tid);
        if (key == "correlation_id")
            return members(x, key, p, [&](std::string_view k, od::value c) {
                return k != "internal" || integer(c, "correlation_id.internal", p, r.correlation);
            });
        if (key == "stream_id")
            return handle(x, key, p, r.stream);
        if (key == "dispatch_info")
            return dispatchInfo(x, p, r, kernelId);
        return times(key, x, p, r.start, r.end, seen);
    });
    if (!ok)
        return false;
    if (seen != 3)
        return p(seen & 1 ? "end_timestamp" : "start_timestamp", "missing");
    if (kernelId < 0)
        return p("dispatch_info.kernel_id", "missing");
    const uint64_t before = out.eventCount();
    r.name = kernelName(kernelId);
    rows.dispatch(r);
    if (out.eventCount() == before && !unnamed.empty() && unnamed.back().first == before)
        unnamed.pop_back(); // the converter did not keep it
    return true;
}

bool RocprofJsonRecords::Impl::dispatchInfo(od::value v, Problem& p, RocprofDispatchRow& r, int64_t& kernelId)
{
    return members(v, "dispatch_info", p, [&](std::string_view key, od::value x) {
        if (key == "agent_id" || key == "queue_id")
            return handle(x, key == "agent_id" ? "dispatch_info.agent_id" : "dispatch_info.queue_id", p,
                key == "agent_id" ? r.agent : r.queue);
        if (key == "workgroup_size" || key == "grid_size")
            return dim3(x, key == "grid_size" ? "dispatch_info.grid_size" : "dispatch_info.workgroup_size", p,
                key == "grid_size" ? r.grid : r.workgroup);
        return intField(
            key, x, { { "kernel_id", &kernelId }, { "group_segment_size", &r.groupSegment } }, "dispatch_info.", p);
    });
}

// The name strings.buffer_records gives operation `op` of record kind `kind`; else "<what> kind:op",
// counted.
std::string_view RocprofJsonRecords::Impl::operation(int64_t kind, int64_t op, const char* what)
{
    if (kind >= 0 && size_t(kind) < operations.size() && op >= 0 && size_t(op) < operations[size_t(kind)].size()
        && !operations[size_t(kind)][size_t(op)].empty())
        return operations[size_t(kind)][size_t(op)];
    ++unknownOperations;
    scratch = std::string(what) + " " + std::to_string(kind) + ":" + std::to_string(op);
    return scratch;
}

// The members every API-like record has: kind, operation, thread, correlation, times.
bool RocprofJsonRecords::Impl::common(std::string_view key, od::value x, Problem& p, int64_t& kind, int64_t& op,
    int64_t& tid, int64_t& correlation, int64_t& start, int64_t& end, int& seen)
{
    if (key == "kind")
        return integer(x, key, p, kind);
    if (key == "operation")
        return integer(x, key, p, op);
    if (key == "thread_id")
        return integer(x, key, p, tid);
    if (key == "correlation_id")
        return members(x, key, p, [&](std::string_view k, od::value c) {
            return k != "internal" || integer(c, "correlation_id.internal", p, correlation);
        });
    return times(key, x, p, start, end, seen);
}

bool RocprofJsonRecords::Impl::memoryCopy(od::value v, Problem& p)
{
    RocprofCopyRow r;
    r.pid = pid;
    int64_t kind = -1, op = -1;
    int seen = 0;
    bool ok = members(v, "memory_copy", p, [&](std::string_view key, od::value x) {
        if (key == "src_agent_id" || key == "dst_agent_id")
            return handle(x, key, p, key == "src_agent_id" ? r.srcAgent : r.dstAgent);
        if (key == "stream_id")
            return handle(x, key, p, r.stream);
        if (key == "bytes")
            return integer(x, key, p, r.bytes);
        return common(key, x, p, kind, op, r.tid, r.correlation, r.start, r.end, seen);
    });
    if (!ok)
        return false;
    if (seen != 3)
        return p(seen & 1 ? "end_timestamp" : "start_timestamp", "missing");
    r.direction = operation(kind, op, "memory copy");
    rows.memoryCopy(r);
    return true;
}

bool RocprofJsonRecords::Impl::marker(od::value v, Problem& p)
{
    RocprofMarkerRow r;
    r.pid = pid;
    int64_t kind = -1, op = -1, correlation = -1;
    int seen = 0;
    bool ok = members(v, "marker_api", p, [&](std::string_view key, od::value x) {
        return common(key, x, p, kind, op, r.tid, correlation, r.start, r.end, seen);
    });
    if (!ok)
        return false;
    if (seen != 3)
        return p(seen & 1 ? "end_timestamp" : "start_timestamp", "missing");
    auto it = markerTexts_.find(correlation);
    if (it != markerTexts_.end()) {
        r.text = it->second;
    } else {
        ++unnamedMarkers;
        r.text = operation(kind, op, "ROCTx");
    }
    rows.marker(r);
    return true;
}

bool RocprofJsonRecords::Impl::hipApi(od::value v, Problem& p)
{
    RocprofApiRow r;
    r.pid = pid;
    int64_t kind = -1, op = -1;
    int seen = 0;
    bool ok = members(v, "hip_api", p, [&](std::string_view key, od::value x) {
        if (key == "kind")
            return integer(x, key, p, kind);
        if (key == "operation")
            return integer(x, key, p, op);
        if (key == "thread_id")
            return integer(x, key, p, r.tid);
        if (key == "correlation_id")
            return members(x, key, p, [&](std::string_view k, od::value c) {
                return k != "internal" || integer(c, "correlation_id.internal", p, r.correlation);
            });
        return times(key, x, p, r.start, r.end, seen);
    });
    if (!ok)
        return false;
    if (seen != 3)
        return p(seen & 1 ? "end_timestamp" : "start_timestamp", "missing");
    r.name = operation(kind, op);
    rows.api(r);
    return true;
}

} // namespace gapscope::model::importer
