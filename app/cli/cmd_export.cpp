// SPDX-License-Identifier: MIT
// gapscope-cli export --sqlite: the query tables of traces written into an SQLite database file.
#ifdef GAPSCOPE_HAVE_SQL
#include "args.h"
#include "command.h"
#include "largefile.h"
#include "sqlsetup.h"

#include "model/analysis/analysisstream.h"
#include "model/base/memoryuse.h"
#include "model/base/taskpool.h"
#include "model/io/tracewindow.h"
#include "model/sql/sqlsession.h"

#include <cstdio>
#include <iostream>
#include <map>

namespace gapscope::cli {

namespace {

const char* const kName = "gapscope-cli export: ";

using model::sql::TableId;
using model::sql::TraceTables;

// The tables of a step batch (its steps and the events it owns) and those of the whole trace.
const std::vector<TableId> kBatchTables
    = { TableId::Kernels, TableId::Steps, TableId::Bars, TableId::Collectives, TableId::HostEvents, TableId::Gaps };
const std::vector<TableId> kWholeTables
    = { TableId::Counters, TableId::Ranks, TableId::Gpus, TableId::Captures, TableId::Labels };

// Adds the events a batch owns to its ranks' totals (the ranks table of a file read in windows).
void countRanks(const model::Trace& window, const model::StepBatch& b, std::map<uint32_t, model::RankStats>& out)
{
    for (const model::Lane& lane : window.lanes()) {
        model::RankStats& rs = out[lane.info.rank];
        rs.rank = lane.info.rank;
        const model::LaneEvents& ev = lane.events;
        for (size_t i = 0; i < ev.size(); ++i) {
            if (ev.start(i) < b.ownedFrom || ev.start(i) >= b.ownedTo)
                continue;
            ++rs.events;
            if (window.kindOf(lane.id, i) == model::EventKind::Kernel) {
                ++rs.kernels;
                rs.kernelTime += ev.duration(i);
            }
        }
    }
}

// A large .gapscope file: its steps in windows (as analyze reads it), each window's rows written and
// dropped before the next is read.
Status exportStreaming(const ArgParser& p, const AnalysisFlags& f, LargeFile& large, model::sql::SqlDatabase& db,
    model::sql::CaptureInfo capture, int64_t windowEvents)
{
    auto skeleton = model::readSkeleton(*large.reader, *large.overview);
    if (!skeleton)
        return skeleton.status();
    std::optional<model::KernelClassifier> classifier;
    model::StepBudget budget;
    model::GapAnalyzer::Options aopt;
    if (Status s = setUpAnalysis(p, f, *skeleton, classifier, budget, aopt); !s)
        return s;
    std::map<uint32_t, model::RankStats> ranks;
    model::StreamOptions so;
    so.maxEvents = uint64_t(windowEvents);
    so.kind = aopt.kind;
    so.kernelConfigs = true; // the kernels table lists graph nodes, grid and block
    so.onBatch = [&](const model::Trace& window, const model::StepBatch& b, const model::GapAnalyzer& batch) {
        model::GapAnalyzer::Selection sel;
        sel.kind = model::GapAnalyzer::Selection::Kind::Steps;
        sel.rank = model::GapAnalyzer::kCriticalRank;
        sel.firstStep = b.firstStep;
        sel.lastStep = b.lastStep;
        const model::HostAttribution host(batch, sel, true);
        TraceTables::Analysis a;
        a.classifier = &*classifier;
        a.analyzer = [&batch] { return &batch; };
        a.host = [&host] { return &host; };
        TraceTables::Scope scope;
        scope.firstStep = b.firstStep;
        scope.lastStep = b.lastStep;
        scope.ownedFrom = b.ownedFrom;
        scope.ownedTo = b.ownedTo;
        scope.whole = false;
        countRanks(window, b, ranks);
        return db.write(TraceTables(window, std::move(a), capture, scope), kBatchTables);
    };
    auto streamed = model::analyzeStreaming(*large.reader, *large.overview,
        std::make_unique<model::Trace>(std::move(skeleton).value()), *classifier, budget, so);
    if (!streamed)
        return streamed.status();
    const model::Trace& whole = *streamed->skeleton;
    std::vector<model::RankStats> stats;
    for (uint32_t r : whole.ranks()) {
        model::RankStats rs = ranks[r];
        rs.rank = r;
        rs.steps = uint32_t(whole.steps(r).size());
        stats.push_back(rs);
    }
    TraceTables::Analysis a;
    a.classifier = &*classifier;
    TraceTables::Scope none; // no step, no event: only the whole trace's tables
    none.firstStep = 1;
    none.lastStep = 0;
    none.ownedFrom = none.ownedTo = 0;
    TraceTables tables(whole, std::move(a), std::move(capture), none);
    tables.setRankStats(std::move(stats));
    return db.write(tables, kWholeTables);
}

Status exportWhole(const ArgParser& p, const AnalysisFlags& f, const std::vector<std::string>& files,
    model::sql::SqlDatabase& db, model::sql::CaptureInfo capture)
{
    auto source = openSqlSource(p, f, files);
    if (!source)
        return source.status();
    for (const auto& w : (*source)->trace.warnings())
        std::cerr << kName << "warning: " << w << "\n";
    return db.write(TraceTables((*source)->trace, (*source)->analysis(), std::move(capture)));
}

int runExport(const std::vector<std::string>& args)
{
    ArgParser p("export", "--sqlite OUT.db FILE...",
        "The tables of `query` (docs/SQL.md) written into an SQLite database that DuckDB, pandas or Grafana read as\n"
        "is: each FILE one capture (its `capture` id in every table; --merge: all files one capture), with a\n"
        "`captures` row (file, host, date, labels). --append adds to a database written before. A large .gapscope\n"
        "file goes in windows of whole steps, in bounded memory (as analyze reads it).");
    AnalysisFlags f;
    f.addTo(p);
    std::string out, read = "auto";
    bool append = false, merge = false;
    std::vector<std::string> labels;
    int64_t windowEvents = 2'000'000;
    p.option("--sqlite", "OUT.db", "the database file to write (required)", out);
    p.flag("--append", "add to OUT.db (which must be a gapscope database); without it OUT.db must not exist", append);
    p.flag("--merge", "all files one trace, one capture (a multi-host capture's parts)", merge);
    p.multi("--label", "KEY=VALUE", "a label of every capture written (repeatable)", labels);
    addReadOption(p, read, "in windows of whole steps, one at a time, in bounded memory");
    addStepRuleOption(p, f.stepRule);
    p.option("--window-events", "N", "--read overview: events read at once, about (default 2000000)", windowEvents);
    p.setPositionals(1, SIZE_MAX);
    if (int rc = p.parse(args); rc >= 0)
        return rc;
    if (out.empty())
        return p.usageError("--sqlite OUT.db is required (the only export format)");
    if (!readModeValid("export", read) || !stepRuleValid("export", f.stepRule, &read))
        return kExitUsage;
    if (windowEvents < 1)
        return p.usageError("--window-events must be >= 1");
    std::map<std::string, std::string> labelMap;
    for (const auto& l : labels) {
        const size_t eq = l.find('=');
        if (eq == std::string::npos || eq == 0)
            return p.usageError("--label wants KEY=VALUE, got '" + l + "'");
        labelMap[l.substr(0, eq)] = l.substr(eq + 1);
    }
    auto db = model::sql::SqlDatabase::open(out, append);
    if (!db) {
        std::cerr << kName << db.error() << "\n";
        return kExitFailure;
    }
    std::vector<std::vector<std::string>> captures;
    if (merge)
        captures.push_back(p.positionals());
    else
        for (const auto& file : p.positionals())
            captures.push_back({ file });
    for (const auto& files : captures) {
        model::sql::CaptureInfo capture = captureInfo(files);
        capture.id = (*db)->nextCaptureId();
        capture.labels = labelMap;
        std::string error;
        std::optional<LargeFile> large = openLarge(files, read, error);
        if (!error.empty()) {
            std::cerr << kName << files[0] << ": " << error << "\n";
            return kExitFailure;
        }
        if (large && large->overview->stepCount() == 0)
            large.reset(); // no steps to read in windows: read whole
        Status s = large ? exportStreaming(p, f, *large, **db, capture, windowEvents)
                         : exportWhole(p, f, files, **db, capture);
        if (!s) {
            std::cerr << kName << s.message() << "\n";
            if (!append) { // a new database is not left half-written
                db->reset();
                std::remove(out.c_str());
            }
            return kExitFailure;
        }
        std::cerr << kName << "capture " << capture.id << ": " << capture.file << "\n";
    }
    if (Status s = (*db)->finish(); !s) {
        std::cerr << kName << s.message() << "\n";
        return kExitFailure;
    }
    std::cerr << kName << "wrote " << out << " (peak resident " << model::peakResidentBytes() / (1 << 20) << " MB)\n";
    return kExitOk;
}

} // namespace

GAPSCOPE_CLI_COMMAND(exportdb, "export", "traces into an SQLite database (--sqlite OUT.db [--append])", runExport);

} // namespace gapscope::cli
#endif
