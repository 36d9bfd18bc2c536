# SPDX-License-Identifier: MIT
# Build options. GUI and CUDA default to AUTO: on where Qt 6 / the CUDA toolkit is found.
set(GAPSCOPE_GUI AUTO CACHE STRING "Build the Qt viewer (ON, OFF, AUTO)")
set_property(CACHE GAPSCOPE_GUI PROPERTY STRINGS AUTO ON OFF)
set(GAPSCOPE_CUDA AUTO CACHE STRING "Build capture injection library and CUDA kernels (ON, OFF, AUTO)")
set_property(CACHE GAPSCOPE_CUDA PROPERTY STRINGS AUTO ON OFF)
option(GAPSCOPE_BUILD_TESTS "Build tests" ON)
option(GAPSCOPE_BUILD_BENCH "Build benchmarks (Google Benchmark)" ON)
set(GAPSCOPE_FUZZ AUTO CACHE STRING "libFuzzer targets (ON, OFF, AUTO: on with clang); without clang they build as seed-replay programs")
option(GAPSCOPE_ASAN "Build with AddressSanitizer and UBSan" OFF)
option(GAPSCOPE_WERROR "Treat warnings as errors" OFF)

if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "" FORCE)
endif()

# Warnings for our own targets (applied through gapscope_warnings).
add_library(gapscope_warnings INTERFACE)
target_compile_options(gapscope_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${GAPSCOPE_WERROR}>>:-Werror>)

if(GAPSCOPE_ASAN)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
  set(CMAKE_C_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
endif()
