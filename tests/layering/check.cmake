# SPDX-License-Identifier: MIT
# Layering rule: model/, capture/ and kernels/ never include a Qt header (they build on a GPU box
# without Qt, and gapscope-cli links model/ only). Fails listing every offending line.
set(bad "")
foreach(dir model capture kernels)
  file(GLOB_RECURSE files ${ROOT}/${dir}/*.h ${ROOT}/${dir}/*.hpp ${ROOT}/${dir}/*.cpp ${ROOT}/${dir}/*.cc ${ROOT}/${dir}/*.cu ${ROOT}/${dir}/*.cuh)
  foreach(f ${files})
    file(STRINGS ${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"](Q[A-Za-z]+|Qt[A-Za-z]*/)")
    foreach(l ${lines})
      string(APPEND bad "${f}: ${l}\n")
    endforeach()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "Qt headers in a Qt-free layer:\n${bad}")
endif()
message(STATUS "layering ok: no Qt includes in model/, capture/, kernels/")
