# SPDX-License-Identifier: MIT
# The capture data path's CPU cost per record on the library's own thread (driven by bench_capture.sh).
if(TARGET gapscope_inject_core)
  add_executable(bench_capture ${CMAKE_CURRENT_LIST_DIR}/bench_capture.cpp)
  target_link_libraries(bench_capture PRIVATE gapscope_inject_core gapscope_warnings)
endif()
