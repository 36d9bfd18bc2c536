// SPDX-License-Identifier: MIT
#pragma once

// rowsFollowEnum: the compile-time check of a vocabulary table (model/format/stats.h,
// model/trace/budgetcomponent.h, model/analysis/barid.h): row i describes enum value i, and there is one
// row per value, so a value added without its row fails to compile.

#include <cstddef>

namespace gapscope {

template <typename Row, size_t N> constexpr bool rowsFollowEnum(const Row (&rows)[N], size_t count)
{
    if (N != count)
        return false;
    for (size_t i = 0; i < N; ++i)
        if (size_t(rows[i].id) != i)
            return false;
    return true;
}

} // namespace gapscope
