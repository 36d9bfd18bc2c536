// SPDX-License-Identifier: MIT
#pragma once

// What `query` and `export --sqlite` share: their analysis flags (AnalysisFlags, analysissetup.h) and one
// trace with its analysis, built only when a table needs it (model/sql/sqltables.h).

#include "analysissetup.h"
#include "args.h"

#include "model/analysis/gapanalyzer.h"
#include "model/analysis/hostattribution.h"
#include "model/sql/sqltables.h"
#include "model/trace/trace.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gapscope::cli {

// One trace (whole) and its analysis as the tables ask for it.
struct SqlSource {
    model::Trace trace;
    std::optional<model::KernelClassifier> classifier;
    model::StepBudget budget;
    model::GapAnalyzer::Options options;
    std::unique_ptr<model::GapAnalyzer> analyzer;
    std::unique_ptr<model::HostAttribution> host;
    // The analysis the tables read: the classifier now, the gap analysis and host attribution on first use.
    model::sql::TraceTables::Analysis analysis();
};

// Opens `files` as one trace (every event) and sets up its analysis.
Expected<std::unique_ptr<SqlSource>> openSqlSource(
    const ArgParser& p, const AnalysisFlags& f, const std::vector<std::string>& files);

// The files' names joined with "; " and their total size.
model::sql::CaptureInfo captureInfo(const std::vector<std::string>& files);

} // namespace gapscope::cli
