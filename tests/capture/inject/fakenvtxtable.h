// SPDX-License-Identifier: MIT
#pragma once

// NVTX's export table faked the way nvtxInit.h hands it to a tool (NVTX_INJECTION64_PATH):
// install() calls the library's InitializeInjectionNvtx2 with it, after which core()[cbid] and
// core2()[cbid] hold the handlers the library installed, to be called as an application's NVTX
// calls reach them. For tst_nvtxhooks and bench_inject. One table per process.

#include <nvtx3/nvToolsExt.h>

extern "C" int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable);

namespace gapscope::capture::inject::fakenvtx {

inline NvtxFunctionPointer* core()
{
    static NvtxFunctionPointer table[NVTX_CBID_CORE_SIZE];
    return table;
}

inline NvtxFunctionPointer* core2()
{
    static NvtxFunctionPointer table[NVTX_CBID_CORE2_SIZE];
    return table;
}

inline int NVTX_API getModule(NvtxCallbackModule module, NvtxFunctionTable* table, unsigned int* size)
{
    static NvtxFunctionPointer* corePtrs[NVTX_CBID_CORE_SIZE];
    static NvtxFunctionPointer* core2Ptrs[NVTX_CBID_CORE2_SIZE];
    if (module == NVTX_CB_MODULE_CORE) {
        for (int i = 0; i < NVTX_CBID_CORE_SIZE; ++i)
            corePtrs[i] = &core()[i];
        *table = corePtrs;
        *size = NVTX_CBID_CORE_SIZE;
        return 1;
    }
    if (module == NVTX_CB_MODULE_CORE2) {
        for (int i = 0; i < NVTX_CBID_CORE2_SIZE; ++i)
            core2Ptrs[i] = &core2()[i];
        *table = core2Ptrs;
        *size = NVTX_CBID_CORE2_SIZE;
        return 1;
    }
    return 0;
}

inline const void* NVTX_API exportTable(uint32_t id)
{
    static NvtxExportTableCallbacks callbacks { sizeof(NvtxExportTableCallbacks), getModule };
    return id == NVTX_ETID_CALLBACKS ? &callbacks : nullptr;
}

// The library's return value (1: installed).
inline int install()
{
    return InitializeInjectionNvtx2(exportTable);
}

} // namespace gapscope::capture::inject::fakenvtx
