# SPDX-License-Identifier: MIT
# Injection library idle-cost benchmark (driven by bench_inject.sh); needs the CUPTI/NVTX headers.
if(TARGET gapscope_inject_core)
  add_executable(bench_inject ${CMAKE_CURRENT_LIST_DIR}/bench_inject.cpp)
  target_link_libraries(bench_inject PRIVATE gapscope_inject_core gapscope_warnings)
endif()
