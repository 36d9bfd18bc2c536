// SPDX-License-Identifier: MIT
#pragma once

// The theoretical latency budget of one decode step (or one prefill step: BudgetPhase) on one GPU (the
// busiest one).
//
// computeBudget() turns a model config, a hardware profile and the serving setup (precision per
// component, TP/EP, batch, context, engine replication, collective latency, CUDA graphs,
// speculative decoding) into items: one per weight matrix kind, the indexer, routed experts,
// lm_head, embedding, KV-cache reads, collectives, the launch/host floor and the draft passes. Each
// item has the bytes it reads and the FLOPs it does per GPU, and two times:
//   ideal      = max(bytes / peak bandwidth, FLOPs / peak TFLOPS); collectives at their modelled
//                latency; no kernel floors, no launch cost.
//   achievable = per kernel max(floor, bytes / achievable bandwidth) (or the calibrated GEMV curve),
//                compute at peak x efficiency, plus the launch/host floor.
// The items add up to the totals (no overlap is assumed). Every assumption made along the way is
// listed in Budget::assumptions in words, so it can be shown and edited. README.md in this folder
// has the formulas.
//
// computeBudget is pure and cheap (a few microseconds for a 94-layer model): the viewer calls it on
// every edit. Thread-safe.

#include "model/budget/hardware.h"
#include "model/budget/modelconfig.h"
#include "model/budget/precision.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gapscope::model {

enum class IndexerMode {
    Auto, // skip the DSA indexer's query side and key scan while context <= index_topk (every row is
          // selected anyway); the key projection still runs to fill the index-key cache
    On, // always run it (what SGLang and vLLM do in decode)
    Off, // leave it out of the budget
};

// What the step does: decode (one new token per sequence, memory-bound) or prefill (the prompt's tokens
// in one forward, compute-bound as the prompt grows).
enum class BudgetPhase { Decode, Prefill };

struct BudgetInputs {
    ModelConfig model;
    HardwareProfile hardware;
    uint32_t tp = 1;
    uint32_t ep = 1; // expert-parallel ranks inside the TP group; experts TP-split by tp/ep
    uint32_t batch = 1; // sequences decoded together
    uint64_t context = 0; // tokens already in each sequence's KV cache
    std::optional<Precision> allPrecision; // "all=" of --precision
    std::map<Component, Precision> precision; // explicit per-component formats (override "all")
    std::optional<Precision> kvCachePrecision; // default: BF16 (or the checkpoint's KV format)
    EngineReplication engine = EngineReplication::Sglang;
    std::optional<bool> edgeCollectives; // embedding AllReduce + logits gather; default: engine == sglang
    double allreduceUs = -1; // fixed latency per collective; < 0: the hardware table
    std::string allreduceLibrary; // which hardware table ("" = its default)
    bool cudaGraphs = true;
    uint32_t extraKernelsPerLayer = 8; // norms, rope, activation, top-k, residual adds (launch floor)
    uint32_t draftTokens = 0; // speculative decoding: tokens drafted per step
    double acceptanceLength = 0; // tokens accepted per step incl. the bonus token; 0 = 1 (+ note)
    IndexerMode indexer = IndexerMode::Auto;
    std::vector<std::vector<double>> expertHits; // measured histogram(s); empty = uniform routing
    std::string modelSource; // as given (preset name or path), kept for BudgetSettings
    std::string hardwareSource; // as given
    std::string hardwareOverrides; // --hw-set spec, already applied to `hardware` (kept for BudgetSettings)
    std::string expertHitsSource;
    // Prefill: the step processes promptTokens tokens (every sequence of the batch together; `batch`
    // sequences, `context` tokens already cached each); speculative decoding does not apply.
    BudgetPhase phase = BudgetPhase::Decode;
    uint64_t promptTokens = 0; // prefill: prompt tokens of the step (must be > 0); also the stored setting
};

struct BudgetItem {
    std::string name;
    Component component = Component::Other;
    double bytes = 0; // read per GPU per step
    double flops = 0; // per GPU per step
    double idealMs = 0;
    double achievableMs = 0;
    std::string bound; // "memory", "compute", "latency"
    std::string note; // how it was computed, in a few words
    double kernels = 0; // kernel launches per step this item stands for (for the launch floor)
};

struct Budget {
    std::vector<BudgetItem> items;
    double idealMs = 0;
    double achievableMs = 0;
    double tokPerSecIdeal = 0;
    double tokPerSecAchievable = 0;
    std::vector<std::string> assumptions;
    // Extras for display.
    double weightBytesPerGpu = 0; // weights read per step per GPU (all weight items)
    double kernelsPerStep = 0; // estimated kernel launches per step
    double tokensPerStep = 0; // batch x acceptance length (prefill: the prompt tokens)
    double expertsPerLayer = 0; // U(B) (or from the histogram)
    double busiestRankExperts = 0; // experts read by the busiest EP rank per layer (EP > 1)
    uint32_t collectivesPerStep = 0;

    double componentMs(Component c, bool achievable) const;
    double componentBytes(Component c) const;
};

Expected<Budget> computeBudget(const BudgetInputs& in);

// Checks the inputs (divisibility, ranges) without computing; computeBudget calls it.
Status validateBudgetInputs(const BudgetInputs& in);

const char* toString(BudgetPhase p); // "decode", "prefill"
const char* toString(IndexerMode m);
bool parseIndexerMode(const std::string& s, IndexerMode& out);
const char* toString(EngineReplication e);
bool parseEngine(const std::string& s, EngineReplication& out);

// Parses "all=nvfp4,lm_head=bf16,kv_cache=fp8" into the inputs (replacing earlier values for the
// components named). Errors name the bad entry.
Status applyPrecisionSpec(const std::string& spec, BudgetInputs& in);
// The inverse: "all=bf16,routed_experts=nvfp4" (empty when nothing is set).
std::string precisionSpec(const BudgetInputs& in);

} // namespace gapscope::model
