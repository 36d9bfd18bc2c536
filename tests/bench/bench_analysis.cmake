# SPDX-License-Identifier: MIT
# Gap analysis benchmark program (driven by bench_analysis.sh).
add_executable(bench_analysis ${CMAKE_CURRENT_LIST_DIR}/bench_analysis.cpp)
target_link_libraries(bench_analysis PRIVATE gapscope_model gapscope_warnings)
