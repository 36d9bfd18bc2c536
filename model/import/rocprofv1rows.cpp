// SPDX-License-Identifier: MIT
#include "model/import/rocprofv1rows.h"

#include <charconv>

namespace gapscope::model::importer {

namespace {
constexpr uint64_t kWarnedRows = 10;
constexpr const char* kNames[RocprofV1Rows::kColumns] = { "KernelName", "gpu-id", "queue-id", "pid", "tid", "grd",
    "wgr", "lds", "arch_vgpr", "vgpr", "BeginNs", "EndNs" };

// An integer column: empty reads as 0 unless `required`.
bool integer(std::string_view text, bool required, int64_t& v, std::string& error)
{
    v = 0;
    if (text.empty()) {
        if (required)
            error = "empty";
        return !required;
    }
    const char* end = text.data() + text.size();
    auto [p, ec] = std::from_chars(text.data(), end, v);
    if (ec == std::errc() && p == end)
        return true;
    error = (ec == std::errc::result_out_of_range ? "out of range: \"" : "not an integer: \"")
        + std::string(text.substr(0, 40)) + (text.size() > 40 ? "...\"" : "\"");
    return false;
}
} // namespace

RocprofV1Rows::RocprofV1Rows(StagedTrace& out, RocprofRowConverter& rows, std::string path)
    : m_out(out)
    , m_rows(rows)
    , m_path(std::move(path))
{
}

const char* RocprofV1Rows::name(Column c)
{
    return kNames[c];
}

Status RocprofV1Rows::checkColumns(const std::set<std::string>& columns) const
{
    std::string missing;
    for (Column c : { KernelName, BeginNs, EndNs })
        if (!columns.count(name(c)))
            missing += std::string(missing.empty() ? "" : ", ") + name(c);
    if (missing.empty())
        return Status::ok();
    return Status::error(m_path + ": a rocprof kernel trace without " + missing
        + ", nothing to import; record the kernels' times with `rocprof --timestamp on` (or rocprofv3)");
}

bool RocprofV1Rows::row(const Values& values, Column& bad, std::string& error)
{
    RocprofDispatchRow r;
    int64_t* const targets[] = { nullptr, &r.agent, &r.queue, &r.pid, &r.tid, &r.grid[0], &r.workgroup[0],
        &r.groupSegment, &r.vgprs, nullptr, &r.start, &r.end };
    int64_t vgpr = 0;
    for (size_t c = GpuId; c < kColumns; ++c) {
        int64_t* target = targets[c] ? targets[c] : &vgpr;
        if (!integer(values[c], c == BeginNs || c == EndNs, *target, error)) {
            bad = Column(c);
            return false;
        }
    }
    if (values[ArchVgpr].empty())
        r.vgprs = vgpr;
    for (int i = 1; i < 3; ++i) // rocprof v1 records one dimension
        r.grid[i] = r.workgroup[i] = 1;
    std::string_view symbol = values[KernelName];
    if (symbol.size() >= 2 && symbol.front() == '"' && symbol.back() == '"')
        symbol = symbol.substr(1, symbol.size() - 2);
    r.name = m_rows.kernelName(symbol);
    m_rows.dispatch(r);
    return true;
}

void RocprofV1Rows::skipped(const std::string& place, const std::string& what)
{
    if (++m_skipped <= kWarnedRows)
        m_out.warnings.push_back(m_path + ": " + place + ": " + what + "; the row is skipped");
}

Status RocprofV1Rows::finish(uint64_t rows)
{
    if (m_skipped > kWarnedRows)
        m_out.warnings.push_back(m_path + ": " + std::to_string(m_skipped - kWarnedRows)
            + " more rows that do not parse are skipped (import_bad_events)");
    if (m_skipped)
        m_out.count(format::Stat::ImportBadEvents, "rocprof kernel trace rows that do not parse (skipped)", m_skipped);
    m_rows.finish();
    if (m_rows.dispatches())
        return Status::ok();
    return Status::error(m_path + ": a rocprof kernel trace without any kernel dispatch, nothing to import ("
        + std::to_string(rows) + " rows, " + std::to_string(m_skipped) + " of them malformed)");
}

} // namespace gapscope::model::importer
