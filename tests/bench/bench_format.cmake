# SPDX-License-Identifier: MIT
# Trace format benchmark program (driven by bench_format.sh).
add_executable(bench_format ${CMAKE_CURRENT_LIST_DIR}/bench_format.cpp)
target_link_libraries(bench_format PRIVATE gapscope_model gapscope_synth gapscope_warnings)
