# SPDX-License-Identifier: MIT
# Perfetto protobuf traces (included from CMakeLists.txt): gapscope-cli on the fixtures of
# fixtures/perfetto (make_perfetto_fixtures.py: a two-rank Kineto pair with overlapping kernels converted
# plain, zstd-compressed and re-wrapped in deflate compressed_packets; a converted synth trace), an `info`
# golden of each form, and tests/corpus/perfetto_check.py, the independent reading of the protobuf wire
# format, on the fixtures and on the .pftrace/.perfetto-trace files of ../shared/corpus (skipped when there
# are none). The unit tests are tst_perfettoimport, the fuzzer tests/fuzz/fuzz_perfetto, hostile files
# tests/hostile (perfetto cases).
set(_pfx ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/perfetto)
set(_pdir ${CMAKE_CURRENT_BINARY_DIR}/perfetto)
if(NOT TARGET gapscope-cli)
  return()
endif()
set(_cli $<TARGET_FILE:gapscope-cli>)
find_package(Python3 REQUIRED COMPONENTS Interpreter)
# The fixtures copied next to the runs, so the output names them without a build-dependent path.
add_test(NAME import_perfetto_fixtures COMMAND ${CMAKE_COMMAND} -E copy_directory ${_pfx} ${_pdir})
set_tests_properties(import_perfetto_fixtures PROPERTIES FIXTURES_SETUP import_perfetto LABELS import)

foreach(g "two_ranks|two_ranks.pftrace|info_perfetto_two_ranks.txt"
    "two_ranks_zstd|two_ranks_zstd.pftrace|info_perfetto_two_ranks_zstd.txt"
    "two_ranks_deflate|two_ranks_deflate.pftrace|info_perfetto_two_ranks_deflate.txt"
    "synth_2ranks|synth_2ranks.pftrace|info_perfetto_synth_2ranks.txt")
  string(REPLACE "|" ";" parts "${g}")
  list(GET parts 0 name)
  list(GET parts 1 file)
  list(GET parts 2 golden)
  set(t import_golden_perfetto_${name})
  add_test(NAME ${t} COMMAND ${CMAKE_COMMAND} -DCLI=${_cli} "-DARGS=info;${file}"
    -DGOLDEN=${CMAKE_CURRENT_SOURCE_DIR}/golden/${golden} -DWORKDIR=${_pdir} -P ${PROJECT_SOURCE_DIR}/tests/golden.cmake)
  set_tests_properties(${t} PROPERTIES LABELS "import;golden" TIMEOUT 120 FIXTURES_REQUIRED import_perfetto)
endforeach()

# The independent reading of the raw files: the fixtures (always there) and the corpus (exit 77, skipped,
# without Perfetto files there).
add_test(NAME import_perfetto_check_fixtures COMMAND ${CMAKE_COMMAND} -E env PYTHONDONTWRITEBYTECODE=1
  ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/corpus/perfetto_check.py --cli ${_cli} ${_pfx})
add_test(NAME corpus_perfetto_check COMMAND ${CMAKE_COMMAND} -E env PYTHONDONTWRITEBYTECODE=1
  ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/corpus/perfetto_check.py --cli ${_cli}
  ${CMAKE_SOURCE_DIR}/../shared/corpus)
set_tests_properties(import_perfetto_check_fixtures PROPERTIES LABELS import TIMEOUT 300)
set_tests_properties(corpus_perfetto_check PROPERTIES LABELS "import;corpus" TIMEOUT 300 SKIP_RETURN_CODE 77)
