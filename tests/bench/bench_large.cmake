# SPDX-License-Identifier: MIT
# Large-file benchmark program (driven by bench_large.sh): the viewer on a file of 36M-1B events read
# through its overview and windows, against the same file decoded whole.
if(TARGET gapscope_views)
  add_executable(bench_large ${CMAKE_CURRENT_LIST_DIR}/bench_large.cpp ${CMAKE_CURRENT_LIST_DIR}/viewerprobe.cpp)
  set_target_properties(bench_large PROPERTIES AUTOMOC ON)
  target_link_libraries(bench_large PRIVATE gapscope_views gapscope_warnings)
endif()
