// SPDX-License-Identifier: MIT
// libFuzzer target for stored budget settings (a .gapscope file's budget section, or FILE.budget beside
// an imported trace): any bytes either fail to parse, fail with a message naming the bad input, or give
// inputs whose budget computes (or fails with a message).
#include "model/budget/budgetsettings.h"
#include "model/format/trace.pb.h"
#include "model/io/tracemetaproto.h"

#include <cstdint>

using namespace gapscope::model;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    gapscope::pb::BudgetSettings settings;
    if (!settings.ParseFromArray(data, int(size)))
        return 0;
    auto in = fromBudgetSettings(fromProto(settings));
    if (!in) {
        if (in.error().empty())
            __builtin_trap(); // errors must say what is wrong
        return 0;
    }
    auto budget = computeBudget(*in);
    if (!budget && budget.error().empty())
        __builtin_trap();
    return 0;
}
