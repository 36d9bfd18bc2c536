# SPDX-License-Identifier: MIT
# Runs gapscope-cli ARGS (a ;-list) and compares stdout with GOLDEN. Set GAPSCOPE_UPDATE_GOLDEN=1 in
# the environment to rewrite the golden file instead (review the diff before committing). The resident
# memory `info --json` reports is masked as <bytes>.
execute_process(COMMAND ${CLI} ${ARGS} WORKING_DIRECTORY ${WORKDIR}
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
# What the process held in memory differs from run to run: compared as a placeholder.
string(REGEX REPLACE "(\"(peak_)?resident_bytes\": )[0-9]+" "\\1<bytes>" out "${out}")
if(DEFINED ENV{GAPSCOPE_UPDATE_GOLDEN})
  file(WRITE ${GOLDEN} "${out}")
  message(STATUS "updated ${GOLDEN}")
  return()
endif()
if(NOT EXISTS ${GOLDEN})
  message(FATAL_ERROR "golden file ${GOLDEN} missing; output was:\n${out}\n${err}")
endif()
file(READ ${GOLDEN} expected)
if(NOT out STREQUAL expected)
  file(WRITE ${WORKDIR}/golden_actual.txt "${out}")
  execute_process(COMMAND diff -u ${GOLDEN} ${WORKDIR}/golden_actual.txt OUTPUT_VARIABLE d)
  message(FATAL_ERROR "output differs from ${GOLDEN} (exit ${rc}):\n${d}\n${err}")
endif()
