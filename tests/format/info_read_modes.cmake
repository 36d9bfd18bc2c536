# SPDX-License-Identifier: MIT
# `info --read overview` must print what `info --read full` prints (text and JSON; the JSON's `read`
# and memory keys aside) on each FILE of FILES (a ;-list): the overview's figures are a full read's.
foreach(file ${FILES})
  foreach(json "" "--json")
    foreach(mode full overview)
      execute_process(COMMAND ${CLI} info ${json} --read ${mode} ${file} OUTPUT_VARIABLE out_${mode}
        ERROR_VARIABLE err RESULT_VARIABLE rc)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR "info ${json} --read ${mode} ${file} failed (${rc}): ${err}")
      endif()
      string(REGEX REPLACE "\n *\"(read|resident_bytes|peak_resident_bytes|cache_bytes)\": [^\n]*" "" out_${mode}
        "${out_${mode}}")
      string(REGEX REPLACE ",(\n})" "\\1" out_${mode} "${out_${mode}}")
    endforeach()
    if(NOT out_full STREQUAL out_overview)
      file(WRITE ${WORKDIR}/info_full.txt "${out_full}")
      file(WRITE ${WORKDIR}/info_overview.txt "${out_overview}")
      execute_process(COMMAND diff -u ${WORKDIR}/info_full.txt ${WORKDIR}/info_overview.txt OUTPUT_VARIABLE d)
      message(FATAL_ERROR "info ${json} of ${file}: the overview differs from the full read:\n${d}")
    endif()
  endforeach()
endforeach()
message(STATUS "info --read overview = --read full on ${FILES}")
