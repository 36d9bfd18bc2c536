// SPDX-License-Identifier: MIT
#pragma once

// The tables of `gapscope-cli query` and `export --sqlite`: what a trace and its gap analysis hold, as
// rows. One schema (tableDefs(): names, columns, types, units, meanings; docs/SQL.md is written from
// it) and one way to walk a table's rows (TraceTables::open), which the query's virtual tables
// (sqlsession.h) and the database export (sqlexport.h) both use. Times are ns on the trace's clock.
//
// Each row comes from the rule that gives the same figure elsewhere, so that a table adds up to what
// `info`, `summary` and `analyze` print:
//   kernels      every kernel event; `step` is the step of its rank whose window [start_i, start_i+1)
//                holds the kernel's start (the last step's window ends at its recorded end), as in
//                summary's step table; `own` is the one-stream own time (owntime.h); `class` and
//                `component` from the analysis's classifier.
//   steps        stepRow (tracesummary.h): summary's step table.
//   bars         GapAnalyzer::analyze of each (rank, step): analyze --json's per-step bars.
//   collectives  GapAnalyzer::forEachCollective: each rank's collective kernels with their match key,
//                wait and wire time.
//   host_events  the events of the host lanes (CPU thread, CUDA API, host NVTX), kind as in the host
//                attribution (HostAttribution::hostKindName).
//   gaps         every idle interval of the analysed steps (GapAnalyzer::forEachStepGaps), with the
//                host attribution of the launch/host gaps and sync stalls (HostAttribution).
//   counters     the trace's loss and anomaly counters (format/stats.h), ranks added up as `info` does.
//   ranks, gpus  the trace header's ranks and GPUs with their totals.
//   captures     one row per trace (file, host, date, producer, labels); labels also one row per label.
//
// Part of a trace (a window of whole steps of a large file, tracewindow.h): Scope limits the rows to
// the batch's steps and to events starting in its owned range, so that each row is written once.
//
// Threading: a TraceTables and its cursors are read-only over the trace and analysis; one cursor per
// thread.

#include "model/analysis/gapanalyzer.h"
#include "model/analysis/hostattribution.h"
#include "model/trace/trace.h"
#include "model/trace/tracesummary.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gapscope::model::sql {

enum class ColumnType { Integer, Real, Text };

struct ColumnDef {
    const char* name;
    ColumnType type;
    const char* unit; // "ns", "bytes", "" (none)
    const char* meaning;
    // A text repeated on many rows (kernel names): a database file stores it once, in its `strings`
    // table, and the row its id (the table is then a view; sqlsession.h).
    bool interned = false;
};

enum class TableId : uint8_t {
    Kernels,
    Steps,
    Bars,
    Collectives,
    HostEvents,
    Gaps,
    Counters,
    Ranks,
    Gpus,
    Captures,
    Labels,
};
constexpr size_t kTableCount = 11;

struct TableDef {
    TableId id;
    const char* name;
    const char* meaning;
    std::vector<ColumnDef> columns; // the first is always `capture`
};

const std::vector<TableDef>& tableDefs();
const TableDef& tableDef(TableId id);
// "CREATE TABLE name(col TYPE, ...)" (for a virtual table's declaration and the export's tables).
std::string createStatement(const TableDef& table, const std::string& qualifiedName);
// Every table and column as Markdown (`query --tables`; docs/SQL.md holds the same text).
std::string schemaMarkdown();

// One value of a row.
struct Cell {
    enum class Kind : uint8_t { Null, Integer, Real, Text };
    Kind kind = Kind::Null;
    int64_t i = 0;
    double d = 0;
    std::string_view s; // valid until the cursor moves, or (stable) while the tables live
    bool stable = false;
    static Cell null() { return {}; }
    static Cell integer(int64_t v) { return { Kind::Integer, v, 0, {}, false }; }
    static Cell real(double v) { return { Kind::Real, 0, v, {}, false }; }
    static Cell text(std::string_view v) { return { Kind::Text, 0, 0, v, false }; }
    static Cell stableText(std::string_view v) { return { Kind::Text, 0, 0, v, true }; }
};

class RowCursor {
public:
    virtual ~RowCursor() = default;
    // Moves to the next row (the first, on the first call); false when there is none.
    virtual bool next() = 0;
    virtual Cell cell(size_t column) const = 0;
};

// A capture's identity in the tables (its `captures` row).
struct CaptureInfo {
    int64_t id = 1;
    std::string file; // the files opened, joined with "; "
    uint64_t bytes = 0;
    std::map<std::string, std::string> labels; // --label key=value
};

class TraceTables {
public:
    // Rows of part of a trace (a batch of a large file): its steps and the events starting in its
    // owned range. The default covers the whole trace.
    struct Scope {
        uint32_t firstStep = 0, lastStep = std::numeric_limits<uint32_t>::max();
        TimeNs ownedFrom = std::numeric_limits<TimeNs>::min(), ownedTo = std::numeric_limits<TimeNs>::max();
        bool whole = true; // rows that belong to the whole trace (counters, ranks, gpus, captures, labels)
    };
    // The analysis the tables read, built when a table first needs it (a query of kernels alone never
    // runs the gap analysis). Any part may be empty: no classifier, kernels without class; no analyzer,
    // no bars, collectives or gaps; no host attribution (one made with keepGaps), gaps without it.
    // What they return must be of `trace` and outlive the tables.
    struct Analysis {
        const KernelClassifier* classifier = nullptr;
        std::function<const GapAnalyzer*()> analyzer;
        std::function<const HostAttribution*()> host;
    };
    TraceTables(const Trace& trace, Analysis analysis, CaptureInfo capture);
    TraceTables(const Trace& trace, Analysis analysis, CaptureInfo capture, Scope scope);
    ~TraceTables();
    TraceTables(const TraceTables&) = delete;
    TraceTables& operator=(const TraceTables&) = delete;

    // Row orders a cursor can give besides the table's own (lane by lane, event by event).
    enum class Order : uint8_t { Natural, ByName }; // ByName: kernels grouped by name, names ascending
    // `columns`: bit i set when column i is read (bit 63: column 63 and above); a cursor fills only those.
    std::unique_ptr<RowCursor> open(TableId table, uint64_t columns = ~uint64_t(0), Order order = Order::Natural) const;
    // The number of rows, where known without walking them (estimates for the query planner); else 0.
    uint64_t rowEstimate(TableId table) const;
    // The ranks table's totals when the trace holds no events (a large file's skeleton, its events
    // counted window by window): they replace traceStats()'s.
    void setRankStats(std::vector<RankStats> stats);

    const Trace& trace() const { return m_trace; }
    const CaptureInfo& capture() const { return m_capture; }

    struct Impl;

private:
    const Trace& m_trace;
    CaptureInfo m_capture;
    std::unique_ptr<Impl> m_impl;
};

} // namespace gapscope::model::sql
