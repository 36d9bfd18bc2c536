# SPDX-License-Identifier: MIT
# Step-finding benchmark program (driven by bench_steps.sh).
add_executable(bench_steps ${CMAKE_CURRENT_LIST_DIR}/bench_steps.cpp)
target_link_libraries(bench_steps PRIVATE gapscope_model gapscope_warnings)
