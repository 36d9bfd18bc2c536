# SPDX-License-Identifier: MIT
# Live streaming benchmark (driven by bench_live.sh): gapscope-agent --replay -> loopback -> client,
# and on to the viewer's model (LiveFeed + Trace::appendFrom).
if(TARGET gapscope_capture_client AND TARGET gapscope-agent)
  # model/io/livefeed.h is the viewer's hand-over into its model (no Qt), so the benchmark measures the
  # viewer's own path on GPU boxes built with GAPSCOPE_GUI=OFF.
  add_executable(bench_live ${CMAKE_CURRENT_LIST_DIR}/bench_live.cpp)
  target_include_directories(bench_live PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(bench_live PRIVATE gapscope_capture_client gapscope_model gapscope_warnings)
  target_compile_definitions(bench_live PRIVATE GAPSCOPE_AGENT_BIN="$<TARGET_FILE:gapscope-agent>")
  add_dependencies(bench_live gapscope-agent)
endif()
