# SPDX-License-Identifier: MIT
# Live streaming benchmark (driven by bench_live.sh): gapscope-agent --replay -> loopback -> client.
if(TARGET gapscope_capture_client AND TARGET gapscope-agent)
  add_executable(bench_live ${CMAKE_CURRENT_LIST_DIR}/bench_live.cpp)
  target_link_libraries(bench_live PRIVATE gapscope_capture_client gapscope_warnings)
  target_compile_definitions(bench_live PRIVATE GAPSCOPE_AGENT_BIN="$<TARGET_FILE:gapscope-agent>")
  add_dependencies(bench_live gapscope-agent)
endif()
