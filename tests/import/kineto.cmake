# SPDX-License-Identifier: MIT
# Kineto import tests beyond the shared fixtures (included from CMakeLists.txt): importTraces end to end
# on files that are not Kineto traces, an MTIA-like device trace, warnings kept through convert and the
# two gzip inflaters (a differential fuzzer too); gapscope-cli on those fixtures (goldens, refusals with
# a non-zero exit); and the independent check (tests/corpus/kineto_check.py) on the fixtures and, when
# it is there, the corpus.
gapscope_add_qtest(tst_kinetoimport SOURCES tst_kinetoimport.cpp LIBS gapscope_model LABELS import)
# The gzip readers (ISA-L, zlib) on arbitrary bytes, each against the other.
gapscope_add_fuzzer(fuzz_gzip SOURCE fuzz_gzip.cpp LIBS gapscope_model
  SEEDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_seeds/gzip SECONDS 30)

if(NOT TARGET gapscope-cli)
  return()
endif()
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(_kfx ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/kineto)
set(_kdir ${CMAKE_CURRENT_BINARY_DIR}/kineto)
set(_cli $<TARGET_FILE:gapscope-cli>)
add_test(NAME import_kineto_fixtures COMMAND sh -c "mkdir -p '${_kdir}' && cd '${_kfx}' && cp mtia.json \
execution_trace.json empty_object.json cpu_only.json rank0.json.gz truncated.json.gz '${_kdir}'")
set_tests_properties(import_kineto_fixtures PROPERTIES FIXTURES_SETUP import_kineto LABELS import)

# Refused: a non-zero exit and a message naming the file, for info, summary and convert (no file written).
foreach(r "execution_trace.json|a PyTorch execution trace" "empty_object.json|the top-level object has no .traceEvents. array"
    "cpu_only.json|nothing to import")
  string(REPLACE "|" ";" parts "${r}")
  list(GET parts 0 file)
  list(GET parts 1 text)
  import_refused(import_kineto_refused ${_kdir} ${file} "${text}" import_kineto)
endforeach()

# Warnings and counters kept through convert: the converted file's info shows them.
add_test(NAME import_kineto_convert COMMAND ${CMAKE_COMMAND} -E chdir ${_kdir} sh -c
  "'${_cli}' convert truncated.json.gz converted_truncated.gapscope && '${_cli}' convert rank0.json.gz rank0.json.gz converted_renumbered.gapscope")
set_tests_properties(import_kineto_convert PROPERTIES FIXTURES_REQUIRED import_kineto
  FIXTURES_SETUP import_kineto_converted LABELS import)
foreach(g "mtia|info mtia.json|info_mtia.txt"
    "mtia_summary|summary mtia.json|summary_mtia.txt"
    "converted_truncated|info converted_truncated.gapscope|info_converted_truncated.txt"
    "converted_renumbered|info converted_renumbered.gapscope|info_converted_renumbered.txt")
  string(REPLACE "|" ";" parts "${g}")
  list(GET parts 0 name)
  list(GET parts 1 args)
  list(GET parts 2 file)
  separate_arguments(args UNIX_COMMAND "${args}")
  add_test(NAME import_golden_kineto_${name} COMMAND ${CMAKE_COMMAND} -DCLI=${_cli} "-DARGS=${args}"
    -DGOLDEN=${CMAKE_CURRENT_SOURCE_DIR}/golden/${file} -DWORKDIR=${_kdir} -P ${PROJECT_SOURCE_DIR}/tests/golden.cmake)
  set_tests_properties(import_golden_kineto_${name} PROPERTIES FIXTURES_REQUIRED "import_kineto;import_kineto_converted"
    LABELS "import;golden")
endforeach()

# The independent reading of the raw files: the fixtures here; the corpus beside the checkout through
# tests/corpus/check.py (corpus_check), which runs the same reading on its kineto/ folder.
add_test(NAME import_kineto_check_fixtures COMMAND ${CMAKE_COMMAND} -E env PYTHONDONTWRITEBYTECODE=1
  ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/corpus/kineto_check.py --cli ${_cli} ${_kfx})
set_tests_properties(import_kineto_check_fixtures PROPERTIES LABELS import TIMEOUT 300)
