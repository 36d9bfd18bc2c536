// SPDX-License-Identifier: MIT
#include "model/import/rocprofv3csvreader.h"

#include "model/import/csvreader.h"
#include "model/import/decimal.h"
#include "model/import/rocprofrows.h"

#include <algorithm>
#include <map>
#include <sys/stat.h>

namespace gapscope::model::importer {

namespace {

const char* const kTool = "rocprofv3 (rocprofiler-sdk, CSV)";
constexpr uint64_t kWarnedRows = 10; // of a set

using File = Rocprofv3CsvReader::File;

// The file name suffix of each kind, in reading order: agents first (the others name them), then the
// files that name the process (kernels and copies take its pid).
struct Suffix {
    const char* text;
    File kind;
};
constexpr Suffix kSuffixes[] = { { "_agent_info.csv", File::AgentInfo }, { "_hip_api_trace.csv", File::HipApiTrace },
    { "_marker_api_trace.csv", File::MarkerApiTrace }, { "_kernel_trace.csv", File::KernelTrace },
    { "_memory_copy_trace.csv", File::MemoryCopyTrace } };

bool endsWith(const std::string& s, const char* suffix)
{
    const size_t n = std::char_traits<char>::length(suffix);
    return s.size() > n && s.compare(s.size() - n, n, suffix) == 0;
}

// The names of a header line: comma-separated, each maybe quoted (rocprofv3 quotes every one).
std::vector<std::string> headerNames(std::string_view line)
{
    std::vector<std::string> names;
    size_t i = 0;
    while (i <= line.size()) {
        size_t end = line.find(',', i);
        if (end == std::string_view::npos)
            end = line.size();
        std::string_view f = line.substr(i, end - i);
        while (!f.empty() && (f.back() == '\r' || f.back() == ' '))
            f.remove_suffix(1);
        if (f.size() >= 2 && f.front() == '"' && f.back() == '"')
            f = f.substr(1, f.size() - 2);
        names.emplace_back(f);
        i = end + 1;
    }
    return names;
}

bool has(const std::vector<std::string>& names, const char* name)
{
    return std::find(names.begin(), names.end(), name) != names.end();
}

// The kind of file a header names; false when it is none of rocprofv3's.
bool kindOfHeader(const std::vector<std::string>& names, File& kind)
{
    if (has(names, "Kind") && has(names, "Kernel_Name") && has(names, "Start_Timestamp"))
        kind = File::KernelTrace;
    else if (has(names, "Kind") && has(names, "Direction") && has(names, "Source_Agent_Id"))
        kind = File::MemoryCopyTrace;
    else if (has(names, "Node_Id") && has(names, "Agent_Type"))
        kind = File::AgentInfo;
    else if (has(names, "Domain") && has(names, "Function") && has(names, "Process_Id"))
        kind = File::HipApiTrace; // or marker rows: the same columns; the file name tells them apart
    else
        return false;
    return true;
}

// The columns each kind needs; the others are read where the header has them.
std::vector<const char*> required(File kind)
{
    switch (kind) {
    case File::KernelTrace:
        return { "Agent_Id", "Queue_Id", "Thread_Id", "Kernel_Name", "Correlation_Id", "Start_Timestamp",
            "End_Timestamp" };
    case File::MemoryCopyTrace:
        return { "Direction", "Source_Agent_Id", "Destination_Agent_Id", "Start_Timestamp", "End_Timestamp" };
    case File::AgentInfo:
        return { "Node_Id", "Agent_Type" };
    case File::HipApiTrace:
    case File::MarkerApiTrace:
        break;
    }
    return { "Function", "Process_Id", "Thread_Id", "Correlation_Id", "Start_Timestamp", "End_Timestamp" };
}

// An agent as rocprofv3's CSV names it: 4, or "Agent 4" (newer versions).
bool agentId(std::string_view text, int64_t& out)
{
    if (text.substr(0, 6) == "Agent ")
        text.remove_prefix(6);
    return parseInteger(text, out);
}

std::string place(uint64_t line, uint32_t column)
{
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// An agent_info row, held until every row is read (a GPU's ordinal is its rank among the GPU rows).
struct AgentRow {
    int64_t node = 0, logical = -1, cu = 0, clock = 0, domain = -1, location = -1;
    bool gpu = false;
    std::string name, product;
};

} // namespace

struct Rocprofv3CsvReader::Columns {
    std::map<std::string, size_t, std::less<>> index;
    // The field of column `name`, empty when the header has no such column.
    std::string_view get(const std::vector<std::string>& fields, std::string_view name) const
    {
        auto it = index.find(name);
        return it == index.end() || it->second >= fields.size() ? std::string_view() : fields[it->second];
    }
    size_t at(std::string_view name) const
    {
        auto it = index.find(name);
        return it == index.end() ? 0 : it->second;
    }
};

Rocprofv3CsvReader::Rocprofv3CsvReader(ByteSource& source, StagedTrace& out)
    : m_source(source)
    , m_path(source.path())
    , m_out(out)
{
}

bool Rocprofv3CsvReader::looksLikeRocprofv3Csv(const char* head, size_t n)
{
    std::string_view text(head, n);
    if (text.substr(0, 3) == "\xEF\xBB\xBF")
        text.remove_prefix(3);
    const size_t end = text.find('\n');
    if (end == std::string_view::npos && n >= 4096)
        return false; // a first line longer than the sniffed bytes is no rocprofv3 header
    File kind;
    return kindOfHeader(headerNames(text.substr(0, end)), kind);
}

std::vector<std::string> Rocprofv3CsvReader::setOf(const std::string& path)
{
    const size_t slash = path.find_last_of('/');
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    for (const Suffix& s : kSuffixes) {
        if (!endsWith(base, s.text))
            continue;
        const std::string prefix = path.substr(0, path.size() - std::char_traits<char>::length(s.text));
        std::vector<std::string> set;
        for (const Suffix& t : kSuffixes) {
            const std::string p = prefix + t.text;
            struct stat st { };
            if (p == path || (::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode)))
                set.push_back(p);
        }
        return set;
    }
    return { path };
}

void Rocprofv3CsvReader::skipped(const std::string& path, uint64_t line, uint32_t column, const std::string& why)
{
    if (++m_badRows <= kWarnedRows)
        m_out.warnings.push_back(path + ": " + place(line, column) + ": " + why + "; the row is skipped");
    m_out.count(format::Stat::ImportBadEvents, "rocprofv3 CSV rows that are malformed (skipped)");
}

Status Rocprofv3CsvReader::read()
{
    RocprofRowConverter rows(m_out, "rocprofv3", kTool);
    const std::vector<std::string> set = setOf(m_path);
    // The process: the set's prefix when it is a pid, else the first Process_Id of its API or marker rows
    // (those files are read first).
    const std::string base = m_path.substr(m_path.find_last_of('/') + 1);
    for (const Suffix& s : kSuffixes)
        if (endsWith(base, s.text))
            m_pidKnown = parseInteger(base.substr(0, base.size() - std::char_traits<char>::length(s.text)), m_pid);
    if (!m_pidKnown)
        m_pid = 0;
    std::string files;
    for (const std::string& p : set) {
        File kind = File::KernelTrace;
        bool named = false;
        for (const Suffix& s : kSuffixes)
            if (endsWith(p, s.text))
                kind = s.kind, named = true;
        if (!named) // a renamed file (the set is itself alone): its header says what it is
            kind = File::HipApiTrace;
        if (Status st = readFile(p, kind, rows); !st) {
            if (p == m_path)
                return st;
            m_out.warnings.push_back(st.message() + "; the other files of the set are read");
        }
        files += (files.empty() ? "" : ", ") + p.substr(p.find_last_of('/') + 1);
    }
    if (m_badRows > kWarnedRows)
        m_out.warnings.push_back(m_path + ": " + std::to_string(m_badRows - kWarnedRows)
            + " more malformed rows are skipped (import_bad_events)");
    if (rows.dispatches() == 0 && rows.copies() == 0 && !m_pidKnown)
        rows.process(m_pid); // named in the refusal below
    rows.finish();
    m_out.metadata["import.files"] = files;
    if (rows.dispatches() || rows.copies())
        return Status::ok();
    return Status::error(m_path
        + ": a rocprofv3 CSV set with no GPU work (no kernel dispatch or memory copy), nothing to import (read " + files
        + ": " + std::to_string(rows.apiCalls()) + " HIP API calls, " + std::to_string(rows.markers())
        + " ROCTx markers, " + std::to_string(m_badRows)
        + " malformed rows); record with `rocprofv3 --kernel-trace --memory-copy-trace`");
}

Status Rocprofv3CsvReader::readFile(const std::string& path, File kind, RocprofRowConverter& rows)
{
    std::unique_ptr<ByteSource> opened;
    if (path != m_path) {
        auto src = ByteSource::open(path);
        if (!src)
            return src.status();
        opened = std::move(*src);
    }
    ByteSource& source = opened ? *opened : m_source;
    Columns c;
    auto header = [&](const std::vector<std::string>& fields) {
        for (size_t i = 0; i < fields.size(); ++i)
            c.index.emplace(fields[i], i);
        File says = kind;
        if (!kindOfHeader(fields, says))
            return Status::error(path + ": not a rocprofv3 CSV file: its header names none of rocprofv3's files");
        if (says != kind && !(says == File::HipApiTrace && kind == File::MarkerApiTrace))
            kind = says; // a file named as one kind holding another: its header wins
        std::string missing;
        for (const char* name : required(kind))
            if (!c.index.count(name))
                missing += (missing.empty() ? "" : ", ") + std::string(name);
        if (!missing.empty())
            return Status::error(path + ": a rocprofv3 CSV file without the columns " + missing);
        return Status::ok();
    };
    std::vector<AgentRow> agents;
    auto record = [&](const CsvReader::Record& r) {
        std::string bad;
        if (kind == File::AgentInfo) {
            AgentRow a;
            const std::string_view type = c.get(r.fields, "Agent_Type");
            a.gpu = type == "GPU" || type == "2";
            bool ok = parseInteger(c.get(r.fields, "Node_Id"), a.node) || (bad = "Node_Id", false);
            auto optional = [&](const char* name, int64_t& to) {
                const std::string_view v = c.get(r.fields, name);
                if (ok && !v.empty() && !parseInteger(v, to))
                    ok = false, bad = name;
            };
            optional("Logical_Node_Type_Id", a.logical);
            optional("Cu_Count", a.cu);
            optional("Max_Engine_Clk_Fcompute", a.clock);
            optional("Domain", a.domain);
            optional("Location_Id", a.location);
            a.name = std::string(c.get(r.fields, "Name"));
            a.product = std::string(c.get(r.fields, "Product_Name"));
            if (ok)
                agents.push_back(std::move(a));
        } else {
            row(kind, c, r.fields, rows, bad);
        }
        if (!bad.empty())
            skipped(path, r.line, r.columns[c.at(bad)] ? r.columns[c.at(bad)] : 1, bad + ": not a number");
    };
    auto table = readCsvTable(source, "rocprofv3 CSV file", header, record,
        [&](uint64_t line, uint32_t column, const std::string& why) { skipped(path, line, column, why); });
    if (!table)
        return table.status();
    if (!agents.empty()) {
        std::stable_sort(
            agents.begin(), agents.end(), [](const AgentRow& a, const AgentRow& b) { return a.node < b.node; });
        int64_t ordinal = 0;
        for (const AgentRow& a : agents) {
            RocprofAgentRow g;
            g.handle = a.node;
            g.gpuIndex = a.gpu ? (a.logical >= 0 ? a.logical : ordinal) : -1;
            ordinal += a.gpu;
            g.productName = a.product;
            g.arch = a.name;
            g.computeUnits = a.cu;
            g.clockMhz = a.clock;
            g.pciDomain = a.domain;
            g.pciLocation = a.location;
            rows.agent(g);
        }
    }
    rows.truncated(path, table->cutAtLine, source.truncated());
    return Status::ok();
}

// One row of a kernel, copy, API or marker file through the converter; false with `bad` naming the
// column that does not parse.
bool Rocprofv3CsvReader::row(
    File kind, const Columns& c, const std::vector<std::string>& f, RocprofRowConverter& rows, std::string& bad)
{
    bool ok = true;
    auto number = [&](const char* name, int64_t& to, bool optional = false) {
        const std::string_view v = c.get(f, name);
        if (ok && !(optional && v.empty()) && !parseInteger(v, to))
            ok = false, bad = name;
    };
    auto agent = [&](const char* name, int64_t& to) {
        if (ok && !agentId(c.get(f, name), to))
            ok = false, bad = name;
    };
    if (kind == File::KernelTrace) {
        RocprofDispatchRow d;
        d.pid = m_pid;
        agent("Agent_Id", d.agent);
        number("Queue_Id", d.queue);
        number("Stream_Id", d.stream, true);
        number("Thread_Id", d.tid);
        number("Correlation_Id", d.correlation);
        number("Start_Timestamp", d.start);
        number("End_Timestamp", d.end);
        number("Group_Segment_Size", d.groupSegment, true);
        number("LDS_Block_Size", d.groupSegment, true);
        number("VGPR_Count", d.vgprs, true);
        number("Arch_VGPR_Count", d.vgprs, true);
        const char* const grid[3] = { "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z" };
        const char* const group[3] = { "Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z" };
        for (int i = 0; i < 3; ++i) {
            number(grid[i], d.grid[i], true);
            number(group[i], d.workgroup[i], true);
        }
        if (!ok)
            return false;
        d.name = rows.kernelName(c.get(f, "Kernel_Name"));
        rows.dispatch(d);
    } else if (kind == File::MemoryCopyTrace) {
        RocprofCopyRow m;
        m.pid = m_pid;
        agent("Source_Agent_Id", m.srcAgent);
        agent("Destination_Agent_Id", m.dstAgent);
        number("Correlation_Id", m.correlation, true);
        number("Thread_Id", m.tid, true);
        number("Stream_Id", m.stream, true);
        number("Bytes", m.bytes, true);
        number("Start_Timestamp", m.start);
        number("End_Timestamp", m.end);
        if (!ok)
            return false;
        m.direction = c.get(f, "Direction");
        rows.memoryCopy(m);
    } else {
        int64_t pid = 0;
        number("Process_Id", pid);
        if (ok && !m_pidKnown) {
            m_pid = pid;
            m_pidKnown = true;
        }
        int64_t tid = 0, correlation = 0, start = 0, end = 0;
        number("Thread_Id", tid);
        number("Correlation_Id", correlation);
        number("Start_Timestamp", start);
        number("End_Timestamp", end);
        if (!ok)
            return false;
        if (kind == File::MarkerApiTrace || c.get(f, "Domain").substr(0, 6) == "MARKER") {
            rows.marker({ start, end, pid, tid, c.get(f, "Function") });
        } else {
            RocprofApiRow a;
            a.start = start;
            a.end = end;
            a.pid = pid;
            a.tid = tid;
            a.correlation = correlation;
            a.name = c.get(f, "Function");
            rows.api(a);
        }
    }
    return true;
}

} // namespace gapscope::model::importer
