// SPDX-License-Identifier: MIT
// Fuzz target for classifier tables given by users (--classifier FILE): any bytes must give a table
// or a clean error, and classifying must never crash or hang. The input is read as a classifier
// JSON file; when it does not parse, its first line is tried as one pattern (the regex engines).
#include "model/trace/kernelclassifier.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

using namespace gapscope;
using namespace gapscope::model;

namespace {
const char* const kNames[] = { "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    "void flashinfer::mla::BatchMLAPagedAttentionKernel<(flashinfer::MaskMode)0, 512u>(flashinfer::mla::Params)",
    "nvjet_tst_64x8_64x16_4x1_v_bz_TNT", "fused_moe_kernel", "", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab" };
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto doc = json::parse(text, "fuzz");
    if (doc) {
        auto k = KernelClassifier::fromJson(*doc, "fuzz");
        if (k) {
            for (const char* n : kNames)
                (void)k->classify(n);
            auto again = KernelClassifier::fromTable(k->toTable());
            if (!again || again->rules().size() != k->rules().size())
                __builtin_trap(); // the stored form must reproduce the table
        }
        return 0;
    }
    std::string pattern(text.substr(0, text.find('\n')));
    auto m = PatternMatcher::compile(pattern);
    if (m) {
        for (const char* n : kNames)
            (void)m->search(n);
        (void)m->search(text);
    }
    return 0;
}
