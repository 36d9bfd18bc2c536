// SPDX-License-Identifier: MIT
#pragma once

// A report that opens anywhere: one self-contained HTML file (no scripts, no fonts or images from
// elsewhere; the charts are inline SVG) of what `analyze` says about a trace, or of what `diff --gate`
// says about two. `gapscope-cli report` writes it.
//
// A trace: the files and the budget; the coverage table (coverage.h); the waterfall of the critical
// rank's median step (its bars as `analyze` gives them, budget bars first, then the gaps up to the
// measured step); the median step of each rank with its collective wait; the findings with what they
// point at (bar, rank, step); the steps by kind; the kernels with the most own time; the host events in
// the launch/host gaps. Two traces: the gate's verdict, the table of verdicts per bar (with intervals),
// A's and B's median-step bars side by side, both coverage tables and the kernels that moved.
//
// Every figure is read from the objects that print the same figure elsewhere (AnalysisReport and its
// JSON, summary's step and kernel tables, DiffReport and its verdicts). Pure functions; thread-safe.

#include "model/analysis/analysisreport.h"
#include "model/analysis/diffreport.h"
#include "model/trace/tracesummary.h"

#include <functional>
#include <string>
#include <vector>

namespace gapscope::model {

struct HtmlReportInput {
    std::string title; // the heading ("gapscope report: trace.gapscope")
    std::vector<std::string> files;
    std::vector<StepRow> steps; // stepTable() (steps by kind)
    std::vector<KernelRow> kernels; // kernelTable(..., KernelOrder::Own): the first rows are shown
    std::function<std::string_view(StringId)> name; // of the kernel rows' names
    size_t topKernels = 15;
};

std::string htmlReport(const AnalysisReport& report, const HtmlReportInput& input);
std::string htmlDiffReport(const DiffReport& diff, const std::string& title);

} // namespace gapscope::model
