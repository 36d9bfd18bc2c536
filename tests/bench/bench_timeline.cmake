# SPDX-License-Identifier: MIT
# Viewer benchmark program (driven by bench_timeline.sh): timeline paint time at full zoom-out and
# at 1 us/pixel, first paint after open, and the longest event-loop stall while loading.
if(TARGET gapscope_views)
  add_executable(bench_timeline ${CMAKE_CURRENT_LIST_DIR}/bench_timeline.cpp ${CMAKE_CURRENT_LIST_DIR}/viewerprobe.cpp)
  set_target_properties(bench_timeline PROPERTIES AUTOMOC ON)
  target_link_libraries(bench_timeline PRIVATE gapscope_views gapscope_warnings)
endif()
