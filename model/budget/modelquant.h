// SPDX-License-Identifier: MIT
#pragma once

// Reading the quantization of a checkpoint: quantization_config inside config.json (fp8, modelopt,
// compressed-tensors, awq/gptq, mxfp4) or a separate hf_quant_config.json (NVIDIA ModelOpt), merged
// by loadModelConfig() under the key "hf_quant_config". Sets ModelConfig::quantMethod, quantFormat,
// unquantizedModules (the patterns as written) and unquantizedMatrices (the matrix keys they hit).
// Pure functions; thread-safe.

#include "model/budget/modelconfig.h"

namespace gapscope::model {

Status readQuantization(const json::Value& config, ModelConfig& m);

// Whether a module name pattern from an ignore list matches a full module path
// ("model.layers.3.mlp.gate"). Patterns: "re:<regex>" (anchored at the start, as Python's re.match;
// nested quantifiers are refused), globs with '*' and '?', or plain names that match whole
// dot-separated segments ("lm_head", "mlp.gate", "model.layers.0.self_attn.kv_b_proj").
bool modulePatternMatches(const std::string& pattern, const std::string& path);

// Module paths a matrix has in layer `layer` (several for fused matrices: gate_up -> gate_proj and up_proj).
std::vector<std::string> modulePaths(const ModelConfig& m, const WeightMatrix& w, uint32_t layer);

} // namespace gapscope::model
