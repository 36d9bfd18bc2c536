// SPDX-License-Identifier: MIT
#pragma once

// traceClassifier: the one resolution of the kernel classifier a trace is analysed with, for the CLI
// and the viewer alike: the table in `file` when one is given (--classifier), else the table stored
// with the trace (its classifier section), else the built-in default. A stored table that does not
// load is an error here; the CLI stops on it, the viewer says so and goes on with the built-in table
// (defaultOnError).

#include "model/trace/kernelclassifier.h"
#include "model/trace/trace.h"

#include <string>

namespace gapscope::model {

Expected<KernelClassifier> traceClassifier(const Trace& trace, const std::string& file = "");
// traceClassifier without a file; on an error the built-in default, and `error` (when given) says why.
KernelClassifier traceClassifierOrDefault(const Trace& trace, std::string* error = nullptr);

} // namespace gapscope::model
