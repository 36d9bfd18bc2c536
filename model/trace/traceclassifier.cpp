// SPDX-License-Identifier: MIT
#include "model/trace/traceclassifier.h"

namespace gapscope::model {

Expected<KernelClassifier> traceClassifier(const Trace& trace, const std::string& file)
{
    if (!file.empty())
        return KernelClassifier::fromFile(file);
    if (const auto& table = trace.classifierTable()) {
        auto c = KernelClassifier::fromTable(*table);
        if (!c)
            return Status::error("the classifier stored with the trace: " + c.error());
        return c;
    }
    return KernelClassifier::builtinDefault();
}

KernelClassifier traceClassifierOrDefault(const Trace& trace, std::string* error)
{
    auto c = traceClassifier(trace);
    if (c)
        return std::move(*c);
    if (error)
        *error = c.error() + "; the built-in classifier is used";
    return KernelClassifier::builtinDefault();
}

} // namespace gapscope::model
