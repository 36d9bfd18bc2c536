// SPDX-License-Identifier: MIT
#pragma once

// Where a trace's budget settings (model, hardware, precision, TP, ...) are kept once the user chose
// them: in the trace file's budget section when it is a writable .gapscope file (rewritten through
// saveTraceSections: temp file + rename), otherwise beside it in FILE.budget (a serialized
// the budget section as a .gapscope file stores it). Loading prefers the sidecar, which is what the user saved last. Errors name
// the file. GUI thread (small synchronous file I/O).

#include "model/trace/tracemeta.h"

#include <QString>

#include <optional>

namespace budgetstore {

QString sidecarPath(const QString& tracePath);
// The sidecar's settings; nullopt when there is none or it cannot be read (then `error` says why).
std::optional<gapscope::model::BudgetSettings> loadSidecar(const QString& tracePath, QString* error);
enum class SavedTo { None, TraceFile, Sidecar };
SavedTo save(const QString& tracePath, const gapscope::model::BudgetSettings& settings, QString* error);

} // namespace budgetstore
