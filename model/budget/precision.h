// SPDX-License-Identifier: MIT
#pragma once

// Precision: the storage format of a weight tensor and what one parameter costs in bytes, scale
// overhead included (see README.md in this folder for the derivation of each figure), plus which
// tensor-core rate a matrix multiply in that format runs at. Pure data; thread-safe.

#include <string>
#include <vector>

namespace gapscope::model {

enum class Precision { Bf16, Fp16, Fp8, Fp8Block128, Nvfp4, Mxfp4, Int4G128 };

// Which peak a GEMM with weights in this format is limited by (weight-only formats dequantize to
// BF16; FP4 formats run on FP4 tensor cores where the GPU has them).
enum class MathRate { Bf16, Fp8, Fp4 };

struct PrecisionInfo {
    Precision precision;
    const char* name; // "bf16", "fp8-block128", ... (the --precision spelling)
    double bytesPerParam; // scales included
    MathRate rate;
    const char* layout; // one line: values and scales
};

const std::vector<PrecisionInfo>& allPrecisions();
const PrecisionInfo& precisionInfo(Precision p);
double bytesPerParam(Precision p);
const char* toString(Precision p);
MathRate mathRate(Precision p);
bool parsePrecision(const std::string& s, Precision& out); // case-insensitive; "fp8_block128" also accepted
const char* toString(MathRate r);

} // namespace gapscope::model
