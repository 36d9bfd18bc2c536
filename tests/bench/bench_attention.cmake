# SPDX-License-Identifier: MIT
# Decode attention on the GPU (driven by bench_attention.sh); builds where the CUDA kernels do.
if(TARGET gapscope_kernels_cuda)
  add_executable(bench_attention ${CMAKE_CURRENT_LIST_DIR}/bench_attention.cu)
  target_link_libraries(bench_attention PRIVATE gapscope_kernels_cuda gapscope_kernels_host CUDA::cudart)
endif()
