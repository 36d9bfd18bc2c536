// SPDX-License-Identifier: MIT
#include "model/budget/precision.h"

#include <algorithm>
#include <cctype>

namespace gapscope::model {

const std::vector<PrecisionInfo>& allPrecisions()
{
    // FP8 block-128: one FP32 scale per 128x128 block = 4 / 16384 bytes per parameter.
    // NVFP4: 4-bit E2M1 values + one FP8 E4M3 scale per 16 values (+ one FP32 per tensor, negligible).
    // MXFP4: 4-bit values + one E8M0 scale per 32 values.
    // INT4 g128 (AWQ/GPTQ layout): 4-bit values + FP16 scale + packed 4-bit zero point per 128 values.
    static const std::vector<PrecisionInfo> table = {
        { Precision::Bf16, "bf16", 2.0, MathRate::Bf16, "16-bit brain float" },
        { Precision::Fp16, "fp16", 2.0, MathRate::Bf16, "16-bit IEEE half" },
        { Precision::Fp8, "fp8", 1.0, MathRate::Fp8, "E4M3 values, one FP32 scale per tensor" },
        { Precision::Fp8Block128, "fp8-block128", 1.0 + 4.0 / (128.0 * 128.0), MathRate::Fp8,
            "E4M3 values, one FP32 scale per 128x128 block" },
        { Precision::Nvfp4, "nvfp4", 0.5 + 1.0 / 16.0, MathRate::Fp4,
            "E2M1 values, one E4M3 scale per 16 values, one FP32 scale per tensor" },
        { Precision::Mxfp4, "mxfp4", 0.5 + 1.0 / 32.0, MathRate::Fp4, "E2M1 values, one E8M0 scale per 32 values" },
        { Precision::Int4G128, "int4-g128", 0.5 + 2.5 / 128.0, MathRate::Bf16,
            "INT4 values, FP16 scale and 4-bit zero point per 128 values (weight-only)" },
    };
    return table;
}

const PrecisionInfo& precisionInfo(Precision p)
{
    const auto& t = allPrecisions();
    auto it = std::find_if(t.begin(), t.end(), [p](const PrecisionInfo& i) { return i.precision == p; });
    return it != t.end() ? *it : t.front();
}

double bytesPerParam(Precision p)
{
    return precisionInfo(p).bytesPerParam;
}
const char* toString(Precision p)
{
    return precisionInfo(p).name;
}
MathRate mathRate(Precision p)
{
    return precisionInfo(p).rate;
}

bool parsePrecision(const std::string& s, Precision& out)
{
    std::string k;
    for (char c : s)
        k += c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (k == "fp8-block" || k == "fp8-b128")
        k = "fp8-block128";
    if (k == "int4" || k == "int4-128" || k == "w4a16")
        k = "int4-g128";
    for (const auto& i : allPrecisions())
        if (k == i.name) {
            out = i.precision;
            return true;
        }
    return false;
}

const char* toString(MathRate r)
{
    switch (r) {
    case MathRate::Bf16:
        return "bf16";
    case MathRate::Fp8:
        return "fp8";
    case MathRate::Fp4:
        return "fp4";
    }
    return "bf16";
}

} // namespace gapscope::model
