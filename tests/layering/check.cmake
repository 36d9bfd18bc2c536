# SPDX-License-Identifier: MIT
# Layering rules, checked on every #include of the tree under ROOT. The layers are the folders: each
# folder of model/ is one library (model/CMakeLists.txt), and the rules below name folders only.
#  1. model/, capture/ and kernels/ never include a Qt header (they build on a GPU box without Qt, and
#     gapscope-cli links model/ only).
#  2. A file of a model folder includes model headers only of its own folder and the folders below it
#     (model/CMakeLists.txt links the same edges):
#       base <- format <- trace <- io;  trace <- steps;  trace <- budget <- analysis;  io <- analysis;
#       io <- import;  import, steps <- open;  analysis <- export;  analysis <- sql;  io <- synth
#     No file sits in model/ itself. capture/ may include base and format only; kernels/ anything but
#     import, open, export, sql and synth.
#  3. Nothing there includes <regex> but model/base/patternmatcher.cpp: std::regex backtracks (a pattern
#     can make it run for ever); PatternMatcher searches in linear time.
#  4. The file format's protobuf types stay at the edge: only model/format/, model/io/ (the model's
#     files and live stream in and out) and capture/ name `pb::` or include trace.pb.h /
#     tracemetaproto.h, and of the rest only the live connection's edge (`wire_edges` below). Checked
#     in model/, kernels/, views/ and app/.
# Fails listing every offending line as FILE: INCLUDE (LAYER may not include TARGET-LAYER).
cmake_policy(SET CMP0057 NEW)
set(allowed_base base)
set(allowed_format base format)
set(allowed_trace base format trace)
set(allowed_io base format trace io)
set(allowed_steps base format trace steps)
set(allowed_budget base format trace budget)
set(allowed_analysis base format trace io budget analysis)
set(allowed_import base format trace io import)
set(allowed_open base format trace io import steps open)
set(allowed_export base format trace io budget analysis export)
set(allowed_sql base format trace io budget analysis sql)
set(allowed_synth base format trace io synth)
set(allowed_capture base format)
set(allowed_kernels base format trace io budget analysis)
set(wire_layers format io)

# The layer of a path relative to ROOT ("model/budget/budget.h" -> budget; "model/x.h" -> "model", a
# file outside the folders), "" when none.
function(layer_of path outvar)
  set(l "")
  if(path MATCHES "^model/([a-z]+)/")
    set(l ${CMAKE_MATCH_1})
  elseif(path MATCHES "^model/[^/]+$")
    set(l model)
  elseif(path MATCHES "^(capture|kernels)/")
    set(l ${CMAKE_MATCH_1})
  endif()
  set(${outvar} ${l} PARENT_SCOPE)
endfunction()

# The live connection's edge outside capture/: the CLI's capture command (its streamed events are the
# protocol's); the viewer goes through capture/client's plain values (livesummary.h) and names none.
set(wire_edges app/cli/cmd_capture.cpp)

set(qt "")
set(edges "")
set(regex "")
set(wire "")
foreach(dir model kernels views app)
  file(GLOB_RECURSE files RELATIVE ${ROOT} ${ROOT}/${dir}/*.h ${ROOT}/${dir}/*.cpp ${ROOT}/${dir}/*.cu ${ROOT}/${dir}/*.cuh)
  foreach(f ${files})
    layer_of(${f} layer)
    if(layer IN_LIST wire_layers OR f IN_LIST wire_edges)
      continue()
    endif()
    file(STRINGS ${ROOT}/${f} lines REGEX "(^|[^A-Za-z0-9_])pb::|#[ \t]*include[ \t]*[<\"]model/(format/trace\\.pb|io/tracemetaproto)\\.h")
    foreach(l ${lines})
      string(STRIP "${l}" l)
      string(APPEND wire "${f}: ${l}\n")
    endforeach()
  endforeach()
endforeach()
foreach(dir model capture kernels)
  file(GLOB_RECURSE files RELATIVE ${ROOT} ${ROOT}/${dir}/*.h ${ROOT}/${dir}/*.hpp ${ROOT}/${dir}/*.cpp ${ROOT}/${dir}/*.cc
    ${ROOT}/${dir}/*.cu ${ROOT}/${dir}/*.cuh ${ROOT}/${dir}/*.in)
  foreach(f ${files})
    file(STRINGS ${ROOT}/${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"](Q[A-Za-z]+|Qt[A-Za-z]*/)")
    foreach(l ${lines})
      string(APPEND qt "${f}: ${l}\n")
    endforeach()
    if(NOT f STREQUAL "model/base/patternmatcher.cpp")
      file(STRINGS ${ROOT}/${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*<regex>")
      foreach(l ${lines})
        string(APPEND regex "${f}: ${l}\n")
      endforeach()
    endif()
    layer_of(${f} from)
    if(from STREQUAL "model")
      string(APPEND edges "${f}: (a file outside model's layer folders)\n")
    endif()
    file(STRINGS ${ROOT}/${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]model/")
    foreach(l ${lines})
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[<\"](model/[^>\"]+)[>\"].*$" "\\1" inc "${l}")
      layer_of(${inc} to)
      if(NOT to IN_LIST allowed_${from})
        string(APPEND edges "${f}: ${inc} (${from} may not include ${to})\n")
      endif()
    endforeach()
  endforeach()
endforeach()
if(qt)
  message(SEND_ERROR "Qt headers in a Qt-free layer:\n${qt}")
endif()
if(edges)
  message(SEND_ERROR "includes against the layer order:\n${edges}")
endif()
if(regex)
  message(SEND_ERROR "std::regex outside model/base/patternmatcher.cpp (use PatternMatcher):\n${regex}")
endif()
if(wire)
  message(SEND_ERROR "protobuf types outside model/format and the conversion edges (use the model's types, "
    "model/trace/tracemeta.h):\n${wire}")
endif()
if(qt OR edges OR regex OR wire)
  message(FATAL_ERROR "layering broken")
endif()
message(STATUS "layering ok: no Qt includes in model/, capture/, kernels/; model layers include only downwards; "
  "no std::regex; protobuf types only at the edges")
