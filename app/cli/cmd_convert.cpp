// SPDX-License-Identifier: MIT
// gapscope-cli convert: a trace to a Perfetto trace (.pftrace), Chrome trace JSON, or .gapscope.
#include "analysissetup.h"
#include "args.h"
#include "budgetoptions.h"
#include "command.h"
#include "largefile.h"

#include "model/base/taskpool.h"
#include "model/export/chromeexport.h"
#include "model/export/exportrules.h"
#include "model/export/perfettoexport.h"
#include "model/io/tracefile.h"
#include "model/open/traceopen.h"
#include "model/trace/traceclassifier.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <iostream>

namespace gapscope::cli {
namespace {

bool endsWith(const std::string& s, const std::string& tail)
{
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

enum class Output { Perfetto, Json, Gapscope, Unknown };

Output outputOf(const std::string& path)
{
    if (endsWith(path, ".pftrace") || endsWith(path, ".perfetto-trace"))
        return Output::Perfetto;
    if (endsWith(path, ".json"))
        return Output::Json;
    if (endsWith(path, ".gapscope"))
        return Output::Gapscope;
    return Output::Unknown;
}

// Wall and CPU time (all threads of the process) since construction.
struct Stopwatch {
    std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
    std::clock_t cpu = std::clock();
    double wallSeconds() const
    {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
    }
    double cpuSeconds() const { return double(std::clock() - cpu) / CLOCKS_PER_SEC; }
};

void report(
    const std::string& out, uint64_t events, uint64_t kernels, uint64_t flows, uint64_t bytes, const Stopwatch& sw)
{
    const double s = sw.wallSeconds();
    char line[320];
    std::snprintf(line, sizeof line,
        ": %" PRIu64 " events (%" PRIu64 " kernels), %" PRIu64 " flows, %" PRIu64
        " bytes (%.1f per kernel) in %.3f s (%.2fM events/s), CPU %.3f s",
        events, kernels, flows, bytes, kernels ? double(bytes) / double(kernels) : 0.0, s,
        s > 0 ? double(events) / s / 1e6 : 0.0, sw.cpuSeconds());
    std::cerr << "wrote " << out << line << "\n";
}

struct ConvertFlags {
    std::string steps, classifier;
    bool noFlows = false, noCompress = false, noWaterfall = false, achievable = false;
    int64_t level = 3, threads = 0;
};

// The analysis behind the budget waterfall track: none when the trace has no steps or it is not asked.
Expected<std::unique_ptr<model::GapAnalyzer>> analysisFor(
    const ArgParser& p, const BudgetOptions& options, const ConvertFlags& f, const model::Trace& trace)
{
    if (f.noWaterfall || trace.stepCount() == 0)
        return std::unique_ptr<model::GapAnalyzer> {};
    auto classifier = model::traceClassifier(trace, f.classifier);
    if (!classifier)
        return classifier.status();
    model::GapAnalyzer::Options ao; // every kind of step: the decode budget
    ao.threads = unsigned(std::max<int64_t>(0, f.threads));
    std::optional<model::BudgetSettings> settings;
    auto budget = pickBudget(p, options, f.achievable, trace, ao.kind, settings);
    if (!budget)
        return budget.status();
    return std::make_unique<model::GapAnalyzer>(trace, std::move(classifier).value(), std::move(budget).value(), ao);
}

int writePerfetto(const ArgParser& p, const BudgetOptions& options, const ConvertFlags& f, const model::Trace& trace,
    const std::string& out, model::TimeNs from, model::TimeNs to)
{
    auto analysis = analysisFor(p, options, f, trace);
    if (!analysis) {
        std::cerr << "gapscope-cli convert: " << analysis.error() << "\n";
        return kExitProblems;
    }
    model::PerfettoExportOptions po;
    po.from = from;
    po.to = to;
    po.flows = !f.noFlows;
    po.compress = !f.noCompress;
    po.threads = unsigned(std::max<int64_t>(0, f.threads));
    if (p.given("--zstd-level"))
        po.zstdLevel = int(f.level);
    po.analysis = analysis->get();
    const Stopwatch sw;
    auto st = model::exportPerfetto(trace, out, po);
    if (!st) {
        std::cerr << "gapscope-cli convert: " << st.error() << "\n";
        return kExitFailure;
    }
    report(out, st->events, st->kernels, st->flows, st->bytes, sw);
    std::cerr << "  " << st->steps << " steps, " << st->annotations << " annotations, " << st->waterfallBars
              << " waterfall bars, " << st->blocks << " sequence blocks, " << st->rawBytes
              << " bytes before compression\n";
    if (st->clamped)
        std::cerr << "  " << st->clamped
                  << " events overlapped the end of an enclosing event on their track and were cut there\n";
    return kExitOk;
}

int runConvert(const std::vector<std::string>& args)
{
    ArgParser p("convert", "IN... OUT",
        "Convert a trace. OUT.pftrace (or .perfetto-trace): a native Perfetto trace (protobuf, interned names, \n"
        "zstd-compressed packets) that ui.perfetto.dev opens: a process per rank, a track per stream, thread and\n"
        "collectives lane, launch->kernel flows, steps, annotations and, when the trace has steps, the budget\n"
        "waterfall per step (budget flags as for 'analyze'; without them, the settings stored in the trace).\n"
        "OUT.json: Chrome trace-event JSON (chrome://tracing, Perfetto UI), the same tracks and flows, much larger.\n"
        "OUT.gapscope: the .gapscope format, from anything gapscope opens (.gapscope, Kineto JSON, nsys SQLite).");
    ConvertFlags f;
    BudgetOptions options;
    p.option("--steps", "A:B", "only the steps A..B (inclusive; Perfetto and JSON output)", f.steps);
    p.flag("--no-flows", "leave out the launch->kernel flows (Perfetto and JSON output)", f.noFlows);
    p.flag("--no-compress", "Perfetto output: plain packets (larger; for tools without zstd)", f.noCompress);
    p.flag("--no-waterfall", "Perfetto output: leave out the budget waterfall tracks", f.noWaterfall);
    p.option("--classifier", "FILE", "Perfetto output: kernel classification table for the waterfall", f.classifier);
    p.flag("--achievable", "Perfetto output: waterfall against the budget's achievable column", f.achievable);
    p.option("--threads", "N", "Perfetto output: encoding threads (default: up to 2)", f.threads);
    p.option("--zstd-level", "L", "zstd level (.gapscope output: default 3; Perfetto output: default -1)", f.level);
    options.addTo(p);
    std::string stepRule;
    addStepRuleOption(p, stepRule);
    p.setPositionals(2, SIZE_MAX);
    if (int rc = p.parse(args); rc >= 0)
        return rc;
    if (f.threads > 0) // the pool is sized once: big enough for what was asked
        model::TaskPool::configure(std::max(model::TaskPool::defaultSize(), unsigned(f.threads)));
    std::vector<std::string> inputs(p.positionals().begin(), p.positionals().end() - 1);
    const std::string out = p.positionals().back();
    const Output kind = outputOf(out);
    if (kind == Output::Unknown)
        return p.usageError(
            "OUT must end in .pftrace or .perfetto-trace (Perfetto), .json (Chrome trace) or .gapscope");
    int64_t a = 0, b = INT64_MAX;
    if (!f.steps.empty() && !parseRange(f.steps, a, b))
        return p.usageError("--steps takes A:B");
    if (!stepRuleValid("convert", stepRule, nullptr))
        return kExitUsage;
    model::ReadOptions ro;
    ro.stepRule = stepRule;
    auto trace = model::openTrace(inputs, ro);
    if (!trace) {
        std::cerr << "gapscope-cli convert: " << trace.error() << "\n";
        return kExitFailure;
    }
    if (kind == Output::Gapscope) {
        model::WriteOptions wo;
        wo.zstdLevel = int(f.level);
        if (Status s = model::writeTraceFile(*trace, out, wo); !s) {
            std::cerr << "gapscope-cli convert: " << s.message() << "\n";
            return kExitFailure;
        }
        return kExitOk;
    }
    model::TimeNs from = INT64_MIN, to = INT64_MAX;
    if (!f.steps.empty() && !model::stepWindow(*trace, a, b, from, to)) {
        std::cerr << "gapscope-cli convert: the trace has no steps " << f.steps << "\n";
        return kExitFailure;
    }
    if (kind == Output::Perfetto)
        return writePerfetto(p, options, f, *trace, out, from, to);
    model::ChromeExportOptions co;
    co.flows = !f.noFlows;
    co.from = from;
    co.to = to;
    const Stopwatch sw;
    auto st = model::exportChromeJson(*trace, out, co);
    if (!st) {
        std::cerr << "gapscope-cli convert: " << st.error() << "\n";
        return kExitFailure;
    }
    report(out, st->events, trace->eventCount(model::EventKind::Kernel), st->flows, st->bytes, sw);
    return kExitOk;
}

} // namespace

GAPSCOPE_CLI_COMMAND(convert, "convert", "convert to a Perfetto trace, Chrome trace JSON or .gapscope", runConvert);

} // namespace gapscope::cli
