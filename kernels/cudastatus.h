// SPDX-License-Identifier: MIT
#pragma once

// Error propagation for CUDA and NCCL calls, nccl-tests style: every call is checked and a failure
// travels up as a Status naming the call, the error string and the source line. Kernels are
// exposed as host functions returning cudaError_t; callers wrap them with GS_CUDA.

#include "model/base/status.h"

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <string>

#define GS_CUDA(call)                                                                                                  \
    do {                                                                                                               \
        const cudaError_t gsErr_ = (call);                                                                             \
        if (gsErr_ != cudaSuccess)                                                                                     \
            return ::gapscope::Status::error(std::string(#call) + ": " + cudaGetErrorString(gsErr_) + " at "           \
                + __FILE__ + ":" + std::to_string(__LINE__));                                                          \
    } while (0)

#define GS_NCCL(call)                                                                                                  \
    do {                                                                                                               \
        const ncclResult_t gsRes_ = (call);                                                                            \
        if (gsRes_ != ncclSuccess)                                                                                     \
            return ::gapscope::Status::error(std::string(#call) + ": " + ncclGetErrorString(gsRes_) + " at "           \
                + __FILE__ + ":" + std::to_string(__LINE__));                                                          \
    } while (0)

#define GS_TRY(expr)                                                                                                   \
    do {                                                                                                               \
        ::gapscope::Status gsSt_ = (expr);                                                                             \
        if (!gsSt_)                                                                                                    \
            return gsSt_;                                                                                              \
    } while (0)
