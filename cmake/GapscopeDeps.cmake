# SPDX-License-Identifier: MIT
# Third-party dependencies. Sets GAPSCOPE_HAVE_GUI, GAPSCOPE_HAVE_CUDA, GAPSCOPE_HAVE_FUZZER.

find_package(Threads REQUIRED)
find_package(Protobuf REQUIRED)

# zstd: Debian/Ubuntu ship a CMake package on newer releases only; look for the library directly.
find_path(ZSTD_INCLUDE_DIR zstd.h REQUIRED)
find_library(ZSTD_LIBRARY NAMES zstd REQUIRED)
if(NOT TARGET gapscope_zstd)
  add_library(gapscope_zstd INTERFACE)
  target_include_directories(gapscope_zstd SYSTEM INTERFACE ${ZSTD_INCLUDE_DIR})
  target_link_libraries(gapscope_zstd INTERFACE ${ZSTD_LIBRARY})
endif()

# simdjson (importers, config.json); optional so a minimal GPU box can still build the CLI core.
find_package(simdjson QUIET)
find_package(SQLite3 QUIET)
find_package(ZLIB QUIET)
# ISA-L (libisal-dev): a faster gzip inflater for .json.gz imports; optional, zlib is the fallback.
find_path(ISAL_INCLUDE_DIR isa-l/igzip_lib.h)
find_library(ISAL_LIBRARY NAMES isal)

# Qt 6 (viewer): GAPSCOPE_HAVE_GUI, with the missing modules and their packages named.
include(GapscopeQt)

# CUDA toolkit (capture injection library with CUPTI, NCCL plugin, kernels/).
set(GAPSCOPE_HAVE_CUDA OFF)
if(NOT GAPSCOPE_CUDA STREQUAL "OFF")
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  find_package(CUDAToolkit QUIET)
  include(CheckLanguage)
  check_language(CUDA)
  if(CUDAToolkit_FOUND AND CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_HOST_COMPILER)
      find_program(GAPSCOPE_GXX g++)
      if(GAPSCOPE_GXX)
        set(CMAKE_CUDA_HOST_COMPILER ${GAPSCOPE_GXX})
      endif()
    endif()
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    enable_language(CUDA)
    set(GAPSCOPE_HAVE_CUDA ON)
    # NCCL: system package (nccl.h in /usr/include) or inside the toolkit.
    find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/include)
    find_library(NCCL_LIBRARY NAMES nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/lib/x86_64-linux-gnu)
    find_library(CUPTI_LIBRARY NAMES cupti HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/lib64)
    find_path(CUPTI_INCLUDE_DIR cupti.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/include)
  elseif(GAPSCOPE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "GAPSCOPE_CUDA=ON but the CUDA toolkit (nvcc) was not found")
  endif()
endif()

# libFuzzer: needs clang. Without it, fuzz targets still build as programs that replay their seeds.
set(GAPSCOPE_HAVE_FUZZER OFF)
if(NOT GAPSCOPE_FUZZ STREQUAL "OFF" AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  set(GAPSCOPE_HAVE_FUZZER ON)
elseif(GAPSCOPE_FUZZ STREQUAL "ON")
  message(FATAL_ERROR "GAPSCOPE_FUZZ=ON needs clang (CXX=clang++)")
endif()

find_package(benchmark QUIET)
