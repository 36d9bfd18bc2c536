// SPDX-License-Identifier: MIT
#pragma once

// The CUDA runtime and driver API names by CUPTI callback id (CUpti_runtime_api_trace_cbid,
// CUpti_driver_api_trace_cbid), as nvprof files record API calls: "cudaLaunchKernel_v7000" for
// runtime id 211. nullptr for an id the table does not know. The table (cuptiapinames.cpp) is
// generated from CUPTI's headers by make_cupti_api_names.py.

#include <cstdint>

namespace gapscope::model::importer {

const char* cuptiRuntimeApiName(int64_t cbid);
const char* cuptiDriverApiName(int64_t cbid);

} // namespace gapscope::model::importer
