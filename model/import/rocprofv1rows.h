// SPDX-License-Identifier: MIT
#pragma once

// RocprofV1Rows: the rows of rocprof v1's kernel trace - results.csv, and the KERN table of
// results.db, which holds the same columns - as RocprofRowConverter dispatches. Both readers hand
// each row over as the text of its columns, so a value is checked the same way whichever file it
// came from.
//
// Columns (by name; others, such as counters, are ignored): KernelName (demangled, " [clone .kd]"
// appended; the SQLite file keeps the CSV's quotes around it), gpu-id, queue-id, pid, tid, grd (grid
// in work-items), wgr (workgroup size), lds, arch_vgpr (vgpr in older versions), BeginNs, EndNs (the
// kernel's execution; DispatchNs and CompleteNs, when the host enqueued it and saw it done, are not
// kept). KernelName, BeginNs and EndNs are required; a row whose number does not parse is skipped,
// counted (import_bad_events) and, for the first ten, named in a warning with its place.
//
// Threading: one thread.

#include "model/import/rocprofrows.h"

#include <array>
#include <set>
#include <string>
#include <string_view>

namespace gapscope::model::importer {

class RocprofV1Rows {
public:
    enum Column { KernelName, GpuId, QueueId, Pid, Tid, Grid, Workgroup, Lds, ArchVgpr, Vgpr, BeginNs, EndNs };
    static constexpr size_t kColumns = 12;
    using Values = std::array<std::string_view, kColumns>; // empty: the column is missing or NULL

    RocprofV1Rows(StagedTrace& out, RocprofRowConverter& rows, std::string path);

    static const char* name(Column c); // the column's name in the file
    // An error unless `columns` (a header's names) has the required ones.
    Status checkColumns(const std::set<std::string>& columns) const;
    // One row; false with `bad` naming the column and `error` what is wrong when a value does not parse.
    bool row(const Values& values, Column& bad, std::string& error);
    // A row that does not parse, at `place` ("line 17, column 3 (BeginNs)"): counted, warned about.
    void skipped(const std::string& place, const std::string& what);
    // Call once after every row: the counters; an error when no row became a dispatch.
    Status finish(uint64_t rows);

private:
    StagedTrace& m_out;
    RocprofRowConverter& m_rows;
    std::string m_path;
    uint64_t m_skipped = 0;
};

} // namespace gapscope::model::importer
