# SPDX-License-Identifier: MIT
# `info --read overview` must print what `info --read full` prints (text and JSON; the JSON's `read`
# and memory keys aside), and `summary --read overview` (whole steps read a batch at a time) what
# `summary --read full` prints, on each FILE of FILES (a ;-list): the overview's figures are a full read's.
# Step kinds aside: they are found from the events, which an overview read does not hold.
set(commands "info" "info --json" "summary" "summary --json --top 1000" "summary --per-rank --sort own")
foreach(file ${FILES})
  foreach(command ${commands})
    separate_arguments(args UNIX_COMMAND "${command}")
    foreach(mode full overview)
      execute_process(COMMAND ${CLI} ${args} --read ${mode} ${file} OUTPUT_VARIABLE out_${mode}
        ERROR_VARIABLE err RESULT_VARIABLE rc)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${command} --read ${mode} ${file} failed (${rc}): ${err}")
      endif()
      string(REGEX REPLACE "\n *\"(read|resident_bytes|peak_resident_bytes|cache_bytes)\": [^\n]*" "" out_${mode}
        "${out_${mode}}")
      # Step kinds need the events (annotations, kernels): an overview read shows stored steps without them.
      string(REGEX REPLACE "\n *\"(kind|label|batch|tokens)\": [^\n]*" "" out_${mode} "${out_${mode}}")
      string(REGEX REPLACE "\n *\"step_kinds\": {[^}]*}," "" out_${mode} "${out_${mode}}")
      string(REGEX REPLACE "(\nsteps: +[0-9]+ \\([^)]*\\))[^\n]*" "\\1" out_${mode} "${out_${mode}}")
      string(REGEX REPLACE ",(\n *})" "\\1" out_${mode} "${out_${mode}}")
    endforeach()
    if(NOT out_full STREQUAL out_overview)
      file(WRITE ${WORKDIR}/read_full.txt "${out_full}")
      file(WRITE ${WORKDIR}/read_overview.txt "${out_overview}")
      execute_process(COMMAND diff -u ${WORKDIR}/read_full.txt ${WORKDIR}/read_overview.txt OUTPUT_VARIABLE d)
      message(FATAL_ERROR "${command} of ${file}: the overview differs from the full read:\n${d}")
    endif()
  endforeach()
endforeach()
message(STATUS "--read overview = --read full for ${commands} on ${FILES}")
