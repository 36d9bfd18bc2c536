// SPDX-License-Identifier: MIT
// gapscope-cli analyze: where the time of each decode step went, against the theoretical budget.
#include "analysissetup.h"
#include "budgetoptions.h"
#include "command.h"
#include "largefile.h"

#include "model/analysis/analysisreport.h"
#include "model/analysis/analysisstream.h"
#include "model/base/taskpool.h"
#include "model/budget/budgetsettings.h"
#include "model/io/tracewindow.h"
#include "model/open/traceopen.h"
#include "model/trace/traceclassifier.h"

#include <algorithm>
#include <iostream>
#include <optional>

namespace gapscope::cli {

namespace {

const char* const kName = "gapscope-cli analyze: ";

struct Flags {
    std::string steps, range, classifier, read = "auto", stepRule, kind;
    bool json = false, achievable = false, noSteps = false, save = false;
    int64_t threads = 0, gaps = 3, windowEvents = 2'000'000;
};

// Fills the report options from --steps / --range. Returns an error message, empty when fine.
std::string selection(const Flags& f, const model::Trace& trace, model::AnalysisReport::Options& o)
{
    if (!f.steps.empty() && !f.range.empty())
        return "--steps and --range exclude each other";
    if (!f.steps.empty()) {
        int64_t a = 0, b = int64_t(model::GapAnalyzer::kAllSteps);
        if (!parseRange(f.steps, a, b) || a < 0 || b < a)
            return "--steps wants A:B with 0 <= A <= B (either side may be left out), got '" + f.steps + "'";
        o.firstStep = uint32_t(a);
        o.lastStep = uint32_t(std::min<int64_t>(b, model::GapAnalyzer::kAllSteps));
    }
    if (!f.range.empty()) {
        auto colon = f.range.find(':');
        int64_t a = 0, b = trace.endTime() - trace.startTime();
        if (colon == std::string::npos || (colon > 0 && !parseDurationNs(f.range.substr(0, colon), a))
            || (colon + 1 < f.range.size() && !parseDurationNs(f.range.substr(colon + 1), b)) || b <= a)
            return "--range wants T0:T1 (durations from the trace start, e.g. 10ms:25.5ms), got '" + f.range + "'";
        o.range = true;
        o.t0 = trace.startTime() + a;
        o.t1 = trace.startTime() + b;
    }
    o.perStep = !f.noSteps;
    o.largestGaps = size_t(std::max<int64_t>(0, f.gaps));
    return {};
}

int runAnalyze(const std::vector<std::string>& args)
{
    ArgParser p("analyze", "TRACE...",
        "Where the time of each decode step went: per rank and step, kernel time per budget component against the "
        "theoretical budget, collective wait, launch/host gaps, sync stalls and the gap between steps, adding up "
        "exactly to the measured step; stragglers; the critical rank; findings in plain words. Budget flags as for "
        "'budget' (without them, the settings stored in the trace, if any).");
    BudgetOptions options;
    options.addTo(p);
    Flags f;
    p.option("--steps", "A:B", "analyse steps A to B (inclusive; default all)", f.steps);
    p.option("--range", "T0:T1", "analyse the time range T0 to T1 from the trace start (10ms:25ms)", f.range);
    p.option("--kind", "KIND",
        "the kind of step analysed: decode, prefill, mixed, draft, verify or all (default: decode where the trace "
        "has decode steps, else all); steps of other kinds are shown but left out",
        f.kind);
    p.option("--classifier", "FILE", "kernel classification table (default: the trace's, else the built-in one)",
        f.classifier);
    p.flag("--achievable", "compare with the budget's achievable column (default: ideal)", f.achievable);
    p.flag("--json", "machine-readable output", f.json);
    p.flag("--no-steps", "JSON: leave out each step's bars (keep median, mean, critical)", f.noSteps);
    p.flag("--save", "store the budget settings and classifier table used in the trace file", f.save);
    p.option("--gaps", "N", "name the N largest idle gaps (default 3)", f.gaps);
    p.option("--threads", "N", "threads for reading and analysis (default: all)", f.threads);
    addReadOption(p, f.read, "in windows of whole steps, one at a time, in bounded memory");
    addStepRuleOption(p, f.stepRule);
    p.option("--window-events", "N", "--read overview: events read at once, about (default 2000000)", f.windowEvents);
    p.setPositionals(1, SIZE_MAX);
    if (int rc = p.parse(args); rc >= 0)
        return rc;

    if (!readModeValid("analyze", f.read) || !stepRuleValid("analyze", f.stepRule, &f.read))
        return kExitUsage;
    if (f.windowEvents < 1)
        return p.usageError("--window-events must be >= 1");
    if (f.threads > 0) // the pool is sized once: big enough for what was asked
        model::TaskPool::configure(std::max(model::TaskPool::defaultSize(), unsigned(f.threads)));
    model::ReadOptions ro;
    ro.threads = unsigned(std::max<int64_t>(0, f.threads));
    ro.stepRule = f.stepRule;
    // A large file is analysed in windows of whole steps (not for a time range: its steps are swept again).
    std::string error;
    std::optional<LargeFile> large;
    if (f.range.empty())
        large = openLarge(p.positionals(), f.read, error);
    else if (f.read == "overview")
        return p.usageError("--range needs the whole trace: --read full or auto");
    if (!error.empty()) {
        std::cerr << kName << error << "\n";
        return kExitFailure;
    }
    if (large && large->overview->stepCount() == 0)
        large.reset(); // no steps to read in windows: read whole (and say so below)
    auto trace
        = large ? model::readSkeleton(*large->reader, *large->overview, ro) : model::openTrace(p.positionals(), ro);
    if (!trace) {
        std::cerr << kName << trace.error() << "\n";
        return kExitFailure;
    }
    model::AnalysisReport::Options ropt;
    if (std::string e = selection(f, trace.value(), ropt); !e.empty())
        return p.usageError(e);
    auto classifier = model::traceClassifier(trace.value(), f.classifier);
    if (!classifier) {
        std::cerr << kName << classifier.error() << "\n";
        return kExitProblems;
    }
    model::GapAnalyzer::Options aopt;
    aopt.threads = unsigned(std::max<int64_t>(0, f.threads));
    aopt.kind = model::GapAnalyzer::defaultKind(trace.value());
    if (!f.kind.empty() && f.kind != "all" && !model::parseStepKind(f.kind, aopt.kind))
        return p.usageError("--kind takes decode, prefill, mixed, draft, verify or all, not '" + f.kind + "'");
    if (f.kind == "all")
        aopt.kind = model::StepKind::Unknown;
    std::optional<model::BudgetSettings> settings;
    auto budget = pickBudget(p, options, f.achievable, trace.value(), aopt.kind, settings);
    if (!budget) {
        std::cerr << kName << budget.error() << "\n";
        return kExitProblems;
    }
    model::ClassifierTable table = classifier->toTable();
    std::optional<model::StreamedAnalysis> streamed;
    std::optional<model::GapAnalyzer> whole;
    if (large) {
        model::StreamOptions so;
        so.maxEvents = uint64_t(f.windowEvents);
        so.firstStep = ropt.firstStep;
        so.lastStep = ropt.lastStep;
        so.threads = aopt.threads;
        so.kind = aopt.kind;
        so.read = ro;
        auto s = model::analyzeStreaming(*large->reader, *large->overview,
            std::make_unique<model::Trace>(std::move(trace).value()), classifier.value(), budget.value(), so);
        if (!s) {
            std::cerr << kName << s.error() << "\n";
            return kExitFailure;
        }
        streamed = std::move(s).value();
        ropt.host = streamed->host.get();
        ropt.coverage = &streamed->coverage;
    } else {
        whole.emplace(trace.value(), std::move(classifier).value(), std::move(budget).value(), aopt);
    }
    const model::GapAnalyzer& analyzer = streamed ? *streamed->analyzer : *whole;
    if (analyzer.ranks().empty()) {
        std::cerr << kName << "no decode steps in the trace (no step boundaries stored or detected)\n";
        return kExitProblems;
    }
    model::AnalysisReport report(analyzer, ropt);
    if (f.json)
        std::cout << json::write(report.toJson(), 1) << "\n";
    else
        std::cout << report.toText();
    if (f.save) {
        if (p.positionals().size() != 1 || !model::isGapscopeFile(p.positionals()[0])) {
            std::cerr << kName << "--save needs one .gapscope file\n";
            return kExitFailure;
        }
        Status s = model::saveTraceSections(p.positionals()[0], nullptr, settings ? &*settings : nullptr, &table);
        if (!s) {
            std::cerr << kName << s.message() << "\n";
            return kExitFailure;
        }
    }
    return kExitOk;
}

} // namespace

GAPSCOPE_CLI_COMMAND(analyze, "analyze", "where the time of each decode step went, against the budget", runAnalyze);

} // namespace gapscope::cli
