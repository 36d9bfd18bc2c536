// SPDX-License-Identifier: MIT
#include "kernels/weightlayout.h"

namespace gapscope::kernels {

using model::Precision;

uint32_t WeightLayout::elementsPerVector(Precision p)
{
    switch (p) {
    case Precision::Bf16:
    case Precision::Fp16:
        return 8;
    case Precision::Fp8:
    case Precision::Fp8Block128:
        return 16;
    case Precision::Nvfp4:
    case Precision::Mxfp4:
    case Precision::Int4G128:
        return 32;
    }
    return 8;
}

static uint64_t ceilDiv(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

bool WeightLayout::make(Precision p, uint64_t rows, uint64_t cols, WeightLayout& out, std::string* error)
{
    const uint32_t vec = elementsPerVector(p);
    if (rows == 0 || cols == 0 || cols % vec != 0) {
        if (error)
            *error = std::string(model::toString(p)) + " needs K to be a positive multiple of " + std::to_string(vec)
                + " (got " + std::to_string(rows) + " x " + std::to_string(cols) + ")";
        return false;
    }
    WeightLayout l;
    l.precision = p;
    l.rows = rows;
    l.cols = cols;
    const uint64_t n = rows * cols;
    switch (p) {
    case Precision::Bf16:
    case Precision::Fp16:
        l.valueBytes = n * 2;
        break;
    case Precision::Fp8:
        l.valueBytes = n;
        l.scaleBytes = 4;
        break;
    case Precision::Fp8Block128:
        l.valueBytes = n;
        l.scaleBytes = ceilDiv(rows, 128) * ceilDiv(cols, 128) * 4;
        break;
    case Precision::Nvfp4:
        l.valueBytes = n / 2;
        l.auxOffset = (n / 16 + 15) / 16 * 16;
        l.scaleBytes = l.auxOffset + 4;
        break;
    case Precision::Mxfp4:
        l.valueBytes = n / 2;
        l.scaleBytes = n / 32;
        break;
    case Precision::Int4G128: {
        const uint64_t groups = ceilDiv(cols, 128);
        l.valueBytes = n / 2;
        l.auxOffset = (rows * groups * 2 + 15) / 16 * 16;
        l.scaleBytes = l.auxOffset + rows * ceilDiv(groups, 2);
        break;
    }
    }
    out = l;
    return true;
}

} // namespace gapscope::kernels
