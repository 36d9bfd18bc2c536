# SPDX-License-Identifier: MIT
# AMD's profilers (included from CMakeLists.txt): gapscope-cli on the rocprof fixtures (slices of the real
# files, make_rocprof_fixtures.py; rocprofv3_copies.json and rocprofv3_csv/, written by hand in the
# layouts rocprofiler-sdk documents: memory copies, ROCTx, a process without GPU work, a CSV set) and on
# the real files of ../shared/corpus/other when they are there
# (skipped otherwise): `info` goldens of rocprofv3 JSON, rocprof v1 CSV and SQLite, refusals of files
# with nothing to import (non-zero exit, the file named), and tests/corpus/rocprof_check.py, the
# independent reading of the raw files, on the fixtures. The unit tests are tst_rocprofimport, the
# fuzzers tests/fuzz/fuzz_rocprof{json,csv,db}, hostile files tests/hostile (rocprof cases).
set(_rfx ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/rocprof)
set(_rdir ${CMAKE_CURRENT_BINARY_DIR}/rocprof)
set(_rcorpus ${CMAKE_SOURCE_DIR}/../shared/corpus)
if(NOT TARGET gapscope-cli)
  return()
endif()
set(_cli $<TARGET_FILE:gapscope-cli>)
find_package(Python3 REQUIRED COMPONENTS Interpreter)
# The fixtures copied next to the runs, and the corpus's folder linked there as `corpus` (read where it is:
# the corpus is never written to).
add_test(NAME import_rocprof_fixtures COMMAND sh -c "'${CMAKE_COMMAND}' -E copy_directory '${_rfx}' '${_rdir}' && '${CMAKE_COMMAND}' -E create_symlink '${_rcorpus}/other' '${_rdir}/corpus'")
set_tests_properties(import_rocprof_fixtures PROPERTIES FIXTURES_SETUP import_rocprof LABELS import)

# `info` of each format: the fixtures (always there), the corpus files (skipped without the corpus), run
# beside them so the output names them without a build-dependent path.
foreach(g "fixture_rocprofv3|rocprofv3.json.gz|info_rocprofv3.txt"
    "fixture_rocprofv3_nostream|rocprofv3_nostream.json|info_rocprofv3_nostream.txt"
    "fixture_rocprofv3_copies|rocprofv3_copies.json|info_rocprofv3_copies.txt"
    "fixture_rocprofv3_csv|rocprofv3_csv/4242_kernel_trace.csv|info_rocprofv3_csv.txt"
    "fixture_rocprof1_csv|rocprof1.csv|info_rocprof1_csv.txt"
    "fixture_rocprof1_db|rocprof1.db|info_rocprof1_db.txt"
    "corpus_rocprofv3|corpus/tracelens_rocprofv3_908_results.json.gz|info_corpus_rocprofv3.txt"
    "corpus_rocprof1_csv|corpus/hpctraining_rocprof1_results.csv|info_corpus_rocprof1_csv.txt"
    "corpus_rocprof1_db|corpus/hpctraining_rocprof1_results.db|info_corpus_rocprof1_db.txt")
  string(REPLACE "|" ";" parts "${g}")
  list(GET parts 0 name)
  list(GET parts 1 file)
  list(GET parts 2 golden)
  set(t import_golden_rocprof_${name})
  add_test(NAME ${t} COMMAND sh -c "[ -f '${_rdir}/${file}' ] || { echo 'skipped: no ${file}'; exit 77; }; exec '${CMAKE_COMMAND}' '-DCLI=${_cli}' '-DARGS=info$<SEMICOLON>${file}' '-DGOLDEN=${CMAKE_CURRENT_SOURCE_DIR}/golden/${golden}' '-DWORKDIR=${_rdir}' -P '${PROJECT_SOURCE_DIR}/tests/golden.cmake'")
  set_tests_properties(${t} PROPERTIES SKIP_RETURN_CODE 77 LABELS "import;golden" TIMEOUT 120
    FIXTURES_REQUIRED import_rocprof)
endforeach()

# Nothing to import: refused by info, summary and convert with a non-zero exit, the file named, no output.
import_refused(import_rocprof_refused ${_rdir} nothing.json
  "a rocprofv3 JSON file with no GPU work (no kernel dispatch or memory copy), nothing to import" import_rocprof)
import_refused(import_rocprof_refused ${_rdir} nothing.csv
  "a rocprof kernel trace without any kernel dispatch, nothing to import" import_rocprof)
import_refused(import_rocprof_refused ${_rdir} 9_hip_api_trace.csv
  "a rocprofv3 CSV set with no GPU work (no kernel dispatch or memory copy), nothing to import" import_rocprof)

# The independent reading of the raw files on the fixtures (the corpus: corpus_check, tests/corpus).
add_test(NAME import_rocprof_check_fixtures COMMAND ${CMAKE_COMMAND} -E env PYTHONDONTWRITEBYTECODE=1
  ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/corpus/rocprof_check.py --cli ${_cli} ${_rfx})
set_tests_properties(import_rocprof_check_fixtures PROPERTIES LABELS import TIMEOUT 300)
