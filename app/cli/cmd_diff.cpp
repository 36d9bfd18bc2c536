// SPDX-License-Identifier: MIT
// gapscope-cli diff: two captures compared (before/after), bar by bar, kernel by kernel, rank by rank.
#include "analysissetup.h"
#include "budgetoptions.h"
#include "command.h"
#include "largefile.h"

#include "model/analysis/analysisstream.h"
#include "model/analysis/diffreport.h"
#include "model/analysis/diffverdict.h"
#include "model/analysis/kernelranges.h"
#include "model/base/taskpool.h"
#include "model/export/htmlreport.h"
#include "model/open/traceopen.h"
#include "model/trace/traceclassifier.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

namespace gapscope::cli {

namespace {

const char* const kName = "gapscope-cli diff: ";

// Takes every "--before F..." / "--after F..." out of `args` (the files up to the next option), so
// that one flag can name several files. Returns false when one of them names no file.
bool takeFileSets(std::vector<std::string>& args, std::vector<std::string>& before, std::vector<std::string>& after,
    std::string& error)
{
    std::vector<std::string> rest;
    for (size_t i = 0; i < args.size(); ++i) {
        std::vector<std::string>* set = args[i] == "--before" ? &before : args[i] == "--after" ? &after : nullptr;
        if (!set) {
            rest.push_back(args[i]);
            continue;
        }
        const size_t from = set->size();
        while (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0)
            set->push_back(args[++i]);
        if (set->size() == from) {
            error = args[i] + " wants one or more trace files";
            return false;
        }
    }
    args = std::move(rest);
    return true;
}

struct Side {
    std::string label;
    std::vector<std::string> paths;
    // Read whole: the trace and its analyzer.
    std::optional<model::Trace> trace;
    std::unique_ptr<model::GapAnalyzer> analyzer;
    // Read in windows of whole steps (a large .gapscope file): the file, its streamed analysis, and
    // what hostOverSteps needs to read a batch again.
    std::optional<LargeFile> large;
    std::optional<model::StreamedAnalysis> streamed;
    std::optional<model::KernelClassifier> classifier;
    std::optional<model::StepBudget> budget;
    model::StreamOptions stream;

    const model::GapAnalyzer& analysis() const { return streamed ? *streamed->analyzer : *analyzer; }
    model::TraceDiff::Side diffSide() const
    {
        model::TraceDiff::Side d;
        if (!streamed)
            return d;
        d.kernels = &streamed->kernels;
        d.host = [this](uint32_t first, uint32_t last) {
            return model::hostOverSteps(
                *large->reader, *large->overview, *streamed, *classifier, *budget, stream, first, last);
        };
        return d;
    }
};

json::Value rangeDiffJson(const std::vector<model::RangeDiffRow>& rows)
{
    json::Value a = json::Value::array();
    for (const auto& r : rows) {
        json::Value x = json::Value::object();
        x.set("path", r.path);
        x.set("a_kernels_per_step", r.aCount);
        x.set("b_kernels_per_step", r.bCount);
        x.set("a_own_ms_per_step", r.aOwnNs / 1e6);
        x.set("b_own_ms_per_step", r.bOwnNs / 1e6);
        x.set("delta_ms_per_step", r.deltaNs() / 1e6);
        a.push(std::move(x));
    }
    return a;
}

void printRangeDiff(const std::vector<model::RangeDiffRow>& rows, size_t top)
{
    std::printf("\nper range, per step (kernels, own ms; A -> B), largest change first:\n");
    std::printf("%9s %9s %10s %10s %10s  %s\n", "A kernels", "B kernels", "A own ms", "B own ms", "change ms", "range");
    for (size_t i = 0; i < rows.size() && i < top; ++i) {
        const auto& r = rows[i];
        std::printf("%9.2f %9.2f %10.4f %10.4f %+10.4f  %s\n", r.aCount, r.bCount, r.aOwnNs / 1e6, r.bOwnNs / 1e6,
            r.deltaNs() / 1e6, r.path.c_str());
    }
    if (rows.size() > top)
        std::printf("(%zu more ranges; --kernels N shows more)\n", rows.size() - top);
}

std::string label(const std::vector<std::string>& paths)
{
    return paths.size() == 1 ? paths[0] : paths[0] + " and " + std::to_string(paths.size() - 1) + " more";
}

// Opens one side and analyses it with the classifier and budget `analyze` would pick for it: a large
// file in windows of whole steps, as `analyze` reads it, with its kernel rows from the same windows.
int openSide(Side& s, const ArgParser& p, const BudgetOptions& options, const std::string& classifierFile,
    bool achievable, unsigned threads, const std::string& read, uint64_t windowEvents, const std::string& stepRule,
    bool byRange)
{
    std::string error;
    s.large = openLarge(s.paths, read, error);
    if (!error.empty()) {
        std::cerr << kName << error << "\n";
        return kExitFailure;
    }
    if (s.large && s.large->overview->stepCount() == 0)
        s.large.reset(); // no steps to read in windows: read whole
    model::ReadOptions ro;
    ro.threads = threads;
    ro.kernelConfigs = byRange; // the comparison counts and times kernels; ranges need graph node ids
    ro.laneSummaries = false; // nothing is drawn
    ro.stepRule = stepRule;
    auto trace
        = s.large ? model::readSkeleton(*s.large->reader, *s.large->overview, ro) : model::openTrace(s.paths, ro);
    if (!trace) {
        std::cerr << kName << trace.error() << "\n";
        return kExitFailure;
    }
    auto classifier = model::traceClassifier(trace.value(), classifierFile);
    if (!classifier) {
        std::cerr << kName << classifier.error() << "\n";
        return kExitProblems;
    }
    std::optional<model::BudgetSettings> settings;
    auto budget = pickBudget(p, options, achievable, trace.value(), model::GapAnalyzer::defaultKind(trace.value()), settings);
    if (!budget) {
        std::cerr << kName << s.label << ": " << budget.error() << "\n";
        return kExitProblems;
    }
    if (s.large) {
        s.classifier.emplace(std::move(classifier).value());
        s.budget.emplace(std::move(budget).value());
        s.stream.maxEvents = windowEvents;
        s.stream.threads = threads;
        s.stream.read = ro;
        s.stream.keepBatchHosts = true; // the host comparison covers the common steps, known later
        s.stream.kernelTable = true;
        s.stream.kind = model::GapAnalyzer::defaultKind(trace.value()); // as below: the kinds stored with the steps
        auto streamed = model::analyzeStreaming(*s.large->reader, *s.large->overview,
            std::make_unique<model::Trace>(std::move(trace).value()), *s.classifier, *s.budget, s.stream);
        if (!streamed) {
            std::cerr << kName << streamed.error() << "\n";
            return kExitFailure;
        }
        s.streamed.emplace(std::move(streamed).value());
        return kExitOk;
    }
    s.trace.emplace(std::move(trace).value());
    model::GapAnalyzer::Options aopt;
    aopt.threads = threads;
    aopt.kind = model::GapAnalyzer::defaultKind(*s.trace); // decode steps compared with decode steps
    s.analyzer = std::make_unique<model::GapAnalyzer>(
        *s.trace, std::move(classifier).value(), std::move(budget).value(), aopt);
    return kExitOk;
}

int runDiff(const std::vector<std::string>& argsIn)
{
    ArgParser p("diff", "A B  |  --before F... --after F...",
        "Two captures compared, A (before) against B (after): the waterfall of the median step and of the mean step "
        "of each, with the change per bar, largest first, and the step time change; per kernel name the count, total, "
        "median and own time in A and B (names paired exactly, else after normalising template arguments and "
        "parameter lists), new and vanished kernels; per rank the measured step, collective wait and stragglers. "
        "A and B are .gapscope files or foreign traces (as for 'analyze'); --before/--after take one file per rank. "
        "Budget flags as for 'analyze' (without them, each trace's stored settings, if any). Exit 1 when something "
        "could not be compared (no steps in common, different rank counts): the rest is still printed.");
    BudgetOptions options;
    options.addTo(p);
    std::string classifierFile;
    bool json = false, achievable = false;
    int64_t threads = 0, kernels = 25;
    std::vector<std::string> before, after, unused;
    p.multi("--before", "F...", "the files of A (one per rank), instead of A", unused);
    p.multi("--after", "F...", "the files of B (one per rank), instead of B", unused);
    p.option("--classifier", "FILE", "kernel classification table for both (default: each trace's, else built-in)",
        classifierFile);
    p.flag("--achievable", "compare with the budget's achievable column (default: ideal)", achievable);
    p.flag("--json", "machine-readable output", json);
    p.option("--kernels", "N", "text: the N kernels that changed most (default 25; JSON lists all)", kernels);
    bool gate = false;
    std::string threshold = "2%", junitOut, markdownOut;
    p.flag("--gate",
        "a verdict per bar and kernel name with a confidence interval from the steps' spread; exit 0 no regression, "
        "1 a bar regressed, 2 not compared",
        gate);
    p.option("--threshold", "T",
        "what counts as a change: a share of A's median (2%, the default; at least 1 us) or a time (0.05ms, 20us)",
        threshold);
    p.option("--junit", "OUT.xml", "write the verdicts as a JUnit report (one test case per bar)", junitOut);
    p.option("--markdown", "OUT.md", "write the verdicts as Markdown a CI job can post", markdownOut);
    std::string htmlOut;
    p.option("--html", "OUT.html", "write the verdicts, bars and coverage as one self-contained HTML file", htmlOut);
    p.option("--threads", "N", "threads for reading and analysis (default: all)", threads);
    std::string read = "auto";
    int64_t windowEvents = 2'000'000;
    addReadOption(p, read, "in windows of whole steps, one at a time, in bounded memory (as 'analyze')");
    std::string stepRule;
    addStepRuleOption(p, stepRule);
    p.option("--window-events", "N", "--read overview: events read at once, about (default 2000000)", windowEvents);
    bool byRange = false;
    p.flag("--by-range",
        "also kernels and own time per step per annotated range (as 'summary --by-range'; eager ranges at launch pair "
        "with CUDA-graph ranges at build; reads whole files)",
        byRange);
    p.setPositionals(0, 2);
    std::vector<std::string> args = argsIn;
    std::string error;
    const bool sets = takeFileSets(args, before, after, error);
    if (int rc = p.parse(args); rc >= 0)
        return rc;
    if (!sets)
        return p.usageError(error);
    if (!readModeValid("diff", read) || !stepRuleValid("diff", stepRule, &read))
        return kExitUsage;
    if (windowEvents < 1)
        return p.usageError("--window-events must be >= 1");
    if (byRange)
        read = "full";
    model::DiffVerdicts::Options vopt;
    if (!threshold.empty() && threshold.back() == '%') {
        char* end = nullptr;
        const double pct = std::strtod(threshold.c_str(), &end);
        if (end != threshold.c_str() + threshold.size() - 1 || !(pct >= 0) || pct > 1000)
            return p.usageError("--threshold wants a share (2%) or a time (0.05ms), not '" + threshold + "'");
        vopt.relative = pct / 100;
    } else {
        int64_t ns = 0;
        if (!parseDurationNs(threshold, ns) || ns <= 0)
            return p.usageError("--threshold wants a share (2%) or a time (0.05ms), not '" + threshold + "'");
        vopt.absoluteNs = double(ns);
    }
    Side a, b;
    if (!before.empty() || !after.empty()) {
        if (before.empty() || after.empty() || !p.positionals().empty())
            return p.usageError("--before and --after go together, instead of A and B");
        a.paths = before;
        b.paths = after;
    } else if (p.positionals().size() == 2) {
        a.paths = { p.positionals()[0] };
        b.paths = { p.positionals()[1] };
    } else {
        return p.usageError("wants two traces A B, or --before F... --after F...");
    }
    a.label = label(a.paths);
    b.label = label(b.paths);
    const unsigned n = unsigned(std::max<int64_t>(0, threads));
    if (threads > 0) // the pool is sized once: big enough for what was asked
        model::TaskPool::configure(std::max(model::TaskPool::defaultSize(), n));
    // Both sides at once: each read and analysis has phases that use one core.
    int rcs[2] = { kExitOk, kExitOk };
    Side* sides[2] = { &a, &b };
    model::TaskPool::shared().parallelFor(
        2,
        [&](size_t i) {
            rcs[i] = openSide(
                *sides[i], p, options, classifierFile, achievable, n, read, uint64_t(windowEvents), stepRule, byRange);
        },
        2);
    for (int rc : rcs)
        if (rc != kExitOk)
            return rc;

    model::TraceDiff diff(a.analysis(), b.analysis(), a.diffSide(), b.diffSide());
    model::DiffReport::Options ropt;
    ropt.aLabel = a.label;
    ropt.bLabel = b.label;
    ropt.textKernels = size_t(std::max<int64_t>(0, kernels));
    ropt.threshold = threshold;
    ropt.aCoverage = a.streamed ? &a.streamed->coverage : nullptr;
    ropt.bCoverage = b.streamed ? &b.streamed->coverage : nullptr;
    std::optional<model::DiffVerdicts> verdicts;
    if (gate || !junitOut.empty() || !markdownOut.empty() || !htmlOut.empty()) {
        verdicts.emplace(diff, vopt);
        ropt.verdicts = &*verdicts;
    }
    model::DiffReport report(diff, ropt);
    std::vector<model::RangeDiffRow> ranges;
    if (byRange) {
        auto table = [](const Side& s) { return model::rangeTable(*s.trace, model::KernelRanges::of(*s.trace)); };
        ranges = model::rangeDiff(table(a), table(b));
    }
    if (json) {
        json::Value o = report.toJson();
        if (byRange)
            o.set("ranges", rangeDiffJson(ranges));
        std::cout << json::write(o, 1) << "\n";
    } else {
        std::cout << report.toText();
        if (byRange)
            printRangeDiff(ranges, size_t(std::max<int64_t>(0, kernels)));
    }
    for (const auto& problem : diff.problems())
        std::cerr << kName << problem.message() << "\n";
    auto writeFile = [](const std::string& path, const std::string& text) {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << text;
        out.close();
        if (!out)
            std::cerr << kName << "cannot write " << path << "\n";
        return bool(out);
    };
    if (!junitOut.empty() && !writeFile(junitOut, report.junit()))
        return kExitFailure;
    if (!markdownOut.empty() && !writeFile(markdownOut, report.markdown()))
        return kExitFailure;
    if (!htmlOut.empty()
        && !writeFile(htmlOut, model::htmlDiffReport(report, "gapscope diff: " + a.label + " -> " + b.label)))
        return kExitFailure;
    if (gate)
        return report.gateExit();
    return diff.problems().empty() ? kExitOk : kExitProblems;
}

} // namespace

GAPSCOPE_CLI_COMMAND(diff, "diff", "two captures compared: bars, kernels and ranks, before against after", runDiff);

} // namespace gapscope::cli
