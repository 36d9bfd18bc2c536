#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs `gapscope-decode-sim --check` (every kernel against its CPU reference, NCCL across the GPUs).
# Exit 77 (CTest: skipped) where there is no GPU.
set -u
sim=$1
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "skipped: no NVIDIA GPU here"
  exit 77
fi
gpus=$(nvidia-smi -L | wc -l)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
exec "$sim" --check --tp "$gpus"
