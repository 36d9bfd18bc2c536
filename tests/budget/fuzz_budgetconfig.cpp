// SPDX-License-Identifier: MIT
// Fuzz target for the budget's loaders of outside input: config.json (parseModelConfig, including
// the quantization ignore lists), hardware presets and gapscope-calibrate profiles
// (parseHardwareProfile), expert-hit histograms (parseExpertHits), and computeBudget on whatever
// config parsed. Any input must give a value or a clean error, never a crash or a hang.
#include "model/budget/budget.h"
#include "model/budget/moeexperts.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

using namespace gapscope;
using namespace gapscope::model;

namespace {
HardwareProfile fixedHardware()
{
    HardwareProfile hw;
    hw.name = "fuzz";
    hw.memoryBandwidthGbs = 4800;
    hw.bf16Tflops = 989;
    hw.fp8Tflops = 1979;
    hw.interconnectGbs = 450;
    hw.kernelFloorUs = 2;
    AllReduceTable t;
    t.library = "nccl";
    t.points = { { 256, 10 }, { 65536, 20 } };
    hw.allreduce.push_back(t);
    return hw;
}

void budgetsFor(const ModelConfig& m, uint8_t knobs)
{
    BudgetInputs in;
    in.model = m;
    in.hardware = fixedHardware();
    in.tp = 1u << (knobs & 3);
    in.ep = (knobs & 4) && m.experts >= in.tp ? in.tp : 1;
    in.batch = 1 + (knobs >> 3);
    in.context = (knobs & 0x10) ? 4096 : 0;
    in.indexer = IndexerMode(knobs % 3);
    in.engine = (knobs & 0x20) ? EngineReplication::None : EngineReplication::Sglang;
    in.draftTokens = (knobs & 0x40) ? 2 : 0;
    in.cudaGraphs = !(knobs & 0x80);
    auto b = computeBudget(in);
    if (b && !(b->idealMs >= 0))
        __builtin_trap(); // a budget is never negative or NaN
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size > 1 << 20)
        return 0;
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto doc = json::parse(text, "fuzz.json");
    if (!doc)
        return 0;
    auto m = parseModelConfig(doc.value(), "fuzz.json");
    if (m)
        budgetsFor(m.value(), size ? data[size / 2] : 0);
    auto hw = parseHardwareProfile(doc.value(), "fuzz.json");
    if (hw) {
        (void)hw->kernelUs(1e6);
        for (const auto& t : hw->allreduce)
            (void)allreduceUs(t, 12288, 8, hw->interconnectGbs);
    }
    for (uint32_t experts : { 4u, 256u }) {
        auto hits = parseExpertHits(doc.value(), experts, "fuzz.json");
        if (hits)
            (void)expertLoadFromHits(hits.value(), 2, 8, 4);
    }
    return 0;
}
