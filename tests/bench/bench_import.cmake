# SPDX-License-Identifier: MIT
# Importer benchmark program (driven by bench_import.sh).
add_executable(bench_import ${CMAKE_CURRENT_LIST_DIR}/bench_import.cpp)
target_link_libraries(bench_import PRIVATE gapscope_model gapscope_warnings)
