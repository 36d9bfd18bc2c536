// SPDX-License-Identifier: MIT
// gapscope-cli report: what `analyze` says about a trace as one self-contained HTML file
// (model/export/htmlreport.h). A diff's report: `diff --gate --html OUT.html A B`.
#include "analysissetup.h"
#include "args.h"
#include "command.h"
#include "largefile.h"

#include "model/analysis/analysisreport.h"
#include "model/export/htmlreport.h"
#include "model/open/traceopen.h"
#include "model/trace/tracesummary.h"

#include <fstream>
#include <iostream>

namespace gapscope::cli {

namespace {

const char* const kName = "gapscope-cli report: ";

int runReport(const std::vector<std::string>& args)
{
    ArgParser p("report", "FILE... --html OUT.html",
        "One self-contained HTML file (no network, no scripts; charts as inline SVG) of what 'analyze' says: the\n"
        "coverage, the waterfall of the critical rank's median step, each rank's median step, the findings with\n"
        "what they point at, the steps by kind, the kernels with the most own time and the host events in the\n"
        "launch/host gaps. Several files are one trace. Analysis flags as for 'analyze'. Two captures compared:\n"
        "'diff --gate --html OUT.html A B'.");
    AnalysisFlags f;
    f.addTo(p);
    addStepRuleOption(p, f.stepRule);
    std::string out;
    p.option("--html", "OUT.html", "the file to write (required)", out);
    p.setPositionals(1, SIZE_MAX);
    if (int rc = p.parse(args); rc >= 0)
        return rc;
    if (out.empty())
        return p.usageError("--html OUT.html is required");
    if (!stepRuleValid("report", f.stepRule, nullptr))
        return kExitUsage;
    model::ReadOptions ro;
    ro.stepRule = f.stepRule;
    ro.laneSummaries = false;
    auto trace = model::openTrace(p.positionals(), ro);
    if (!trace) {
        std::cerr << kName << trace.error() << "\n";
        return kExitFailure;
    }
    std::optional<model::KernelClassifier> classifier;
    model::StepBudget budget;
    model::GapAnalyzer::Options options;
    if (Status s = setUpAnalysis(p, f, *trace, classifier, budget, options); !s) {
        std::cerr << kName << s.message() << "\n";
        return kExitProblems;
    }
    model::GapAnalyzer analyzer(*trace, *classifier, budget, options);
    if (analyzer.ranks().empty()) {
        std::cerr << kName << "no decode steps in the trace (no step boundaries stored or detected)\n";
        return kExitProblems;
    }
    model::AnalysisReport::Options ropt;
    ropt.perStep = false;
    const model::AnalysisReport report(analyzer, ropt);
    model::HtmlReportInput in;
    in.files = p.positionals();
    in.title = "gapscope report: " + (in.files.size() == 1 ? in.files[0] : std::to_string(in.files.size()) + " files");
    in.steps = model::stepTable(*trace);
    in.kernels = model::kernelTable(*trace, model::KernelOrder::Own);
    in.name = [&trace](model::StringId id) { return trace->str(id); };
    std::ofstream file(out, std::ios::binary | std::ios::trunc);
    file << model::htmlReport(report, in);
    file.close();
    if (!file) {
        std::cerr << kName << "cannot write " << out << "\n";
        return kExitFailure;
    }
    std::cerr << kName << "wrote " << out << "\n";
    return kExitOk;
}

} // namespace

GAPSCOPE_CLI_COMMAND(report, "report", "one self-contained HTML report of a trace (--html OUT.html)", runReport);

} // namespace gapscope::cli
