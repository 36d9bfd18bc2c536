# SPDX-License-Identifier: MIT
# Budget benchmark program (driven by bench_budget.sh).
add_executable(bench_budget ${CMAKE_CURRENT_LIST_DIR}/bench_budget.cpp)
target_link_libraries(bench_budget PRIVATE gapscope_model gapscope_warnings)
