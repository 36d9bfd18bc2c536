# SPDX-License-Identifier: MIT
# Layering rules, checked on every #include of the tree under ROOT:
#  1. model/, capture/ and kernels/ never include a Qt header (they build on a GPU box without Qt, and
#     gapscope-cli links model/ only).
#  2. A file of a model layer includes model headers only of its own layer and the layers below it
#     (model/CMakeLists.txt links the same edges):
#       base (model/status.h, model/patternmatcher.*) <- format <- core (model/*) <- budget <- analysis
#       core <- steps;  core <- import;  import, steps <- open;  analysis <- export;  analysis <- sql
#     capture/ may include base and format only; kernels/ anything but import, open and export.
#  3. Nothing there includes <regex> but model/patternmatcher.cpp: std::regex backtracks (a pattern can
#     make it run for ever); PatternMatcher searches in linear time.
#  4. The file format's protobuf types stay at the edge: outside model/format/ and capture/, only the
#     files that convert between them and the model's own types (the readers, the writer, the live
#     stream's decoder, the capture protocol's clients; `wire_edges` below) name `pb::` or include
#     trace.pb.h / tracemetaproto.h. Checked in model/, kernels/, views/ and app/.
# Fails listing every offending line as FILE: INCLUDE (LAYER may not include TARGET-LAYER).
cmake_policy(SET CMP0057 NEW)
set(allowed_base base)
set(allowed_format base format)
set(allowed_core base format core)
set(allowed_budget base format core budget)
set(allowed_analysis base format core budget analysis)
set(allowed_steps base format core steps)
set(allowed_import base format core import)
set(allowed_open base format core import steps open)
set(allowed_export base format core budget analysis export)
set(allowed_sql base format core budget analysis sql)
set(allowed_capture base format)
set(allowed_kernels base format core budget analysis)

# The layer of a path relative to ROOT ("model/budget/budget.h" -> budget), "" when none.
function(layer_of path outvar)
  set(l "")
  if(path MATCHES "^model/(status\\.h|patternmatcher\\.(h|cpp))$")
    set(l base)
  elseif(path MATCHES "^model/(format|steps|budget|analysis|import|open|export|sql)/")
    set(l ${CMAKE_MATCH_1})
  elseif(path MATCHES "^model/[^/]+$")
    set(l core)
  elseif(path MATCHES "^(capture|kernels)/")
    set(l ${CMAKE_MATCH_1})
  endif()
  set(${outvar} ${l} PARENT_SCOPE)
endfunction()

set(wire_edges model/chunkimporter.h model/chunkimporter.cpp model/livefeed.h model/livefeed.cpp model/overview.cpp model/synth.cpp
  model/synthsink.cpp model/tracefile.cpp model/traceloader.h model/traceloader.cpp model/tracemetaproto.h
  model/tracemetaproto.cpp model/tracesections.cpp views/liveworker.cpp app/cli/cmd_capture.cpp
  app/gui/connectdialog.h app/gui/connectdialog.cpp)

set(qt "")
set(edges "")
set(regex "")
set(wire "")
foreach(dir model kernels views app)
  file(GLOB_RECURSE files RELATIVE ${ROOT} ${ROOT}/${dir}/*.h ${ROOT}/${dir}/*.cpp ${ROOT}/${dir}/*.cu ${ROOT}/${dir}/*.cuh)
  foreach(f ${files})
    if(f MATCHES "^model/format/" OR f IN_LIST wire_edges)
      continue()
    endif()
    file(STRINGS ${ROOT}/${f} lines REGEX "(^|[^A-Za-z0-9_])pb::|#[ \t]*include[ \t]*[<\"]model/(format/trace\\.pb|tracemetaproto)\\.h")
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
    if(NOT f STREQUAL "model/patternmatcher.cpp")
      file(STRINGS ${ROOT}/${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*<regex>")
      foreach(l ${lines})
        string(APPEND regex "${f}: ${l}\n")
      endforeach()
    endif()
    layer_of(${f} from)
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
  message(SEND_ERROR "std::regex outside model/patternmatcher.cpp (use PatternMatcher):\n${regex}")
endif()
if(wire)
  message(SEND_ERROR "protobuf types outside model/format and the conversion edges (use the model's types, "
    "model/tracemeta.h):\n${wire}")
endif()
if(qt OR edges OR regex OR wire)
  message(FATAL_ERROR "layering broken")
endif()
message(STATUS "layering ok: no Qt includes in model/, capture/, kernels/; model layers include only downwards; "
  "no std::regex; protobuf types only at the edges")
