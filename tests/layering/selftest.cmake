# SPDX-License-Identifier: MIT
# check.cmake must fail on tests/layering/fixture and name exactly its six bad lines (an upward
# include in format/, one in budget/, a Qt header in capture/, <regex> in capture/, a protobuf header and
# a pb:: type in views/), not the allowed ones.
execute_process(COMMAND ${CMAKE_COMMAND} -DROOT=${FIXTURE} -P ${CHECK} RESULT_VARIABLE rc OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
string(APPEND out "${err}")
string(REGEX REPLACE "[ \t\r\n]+" " " flat "${out}")
if(rc EQUAL 0)
  message(FATAL_ERROR "check.cmake passed a tree with upward includes:\n${out}")
endif()
foreach(want "model/format/upward.h: model/trace/trace.h (format may not include trace)"
    "model/steps/upward.cpp: model/io/tracefile.h (steps may not include io)"
    "model/loose.h: (a file outside model's layer folders)"
    "model/budget/upward.cpp: model/analysis/waterfall.h (budget may not include analysis)"
    "capture/qt.cpp: #include <QString>" "capture/qt.cpp: #include <regex>"
    "views/wire.cpp: #include \"model/format/trace.pb.h\"" "views/wire.cpp: gapscope::pb::Chunk c;")
  string(FIND "${flat}" "${want}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "check.cmake did not report '${want}':\n${out}")
  endif()
endforeach()
string(FIND "${flat}" "json.h" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "check.cmake reported an allowed include (model/base/json.h from budget):\n${out}")
endif()
string(FIND "${flat}" "wireok.cpp" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "check.cmake reported protobuf types in model/io/, where they belong:\n${out}")
endif()
string(FIND "${flat}" "steps/upward.cpp: model/trace" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "check.cmake reported an allowed include (model/trace from steps):\n${out}")
endif()
string(FIND "${flat}" "views/ok.cpp" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "check.cmake reported a file that names no protobuf type (views/ok.cpp):\n${out}")
endif()
message(STATUS "layering self-test ok")
