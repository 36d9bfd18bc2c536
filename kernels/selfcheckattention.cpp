// SPDX-License-Identifier: MIT
#include "kernels/selfcheckattention.h"
#include "kernels/attention.h"
#include "kernels/cpureference.h"
#include "kernels/ops.h"
#include "kernels/selfcheckutil.h"

#include <cmath>
#include <string>

namespace gapscope::kernels::check {

namespace {

// One head of d bf16 values rotated at position pos (rotary over the whole head), in double.
std::vector<double> rotatedHead(const uint16_t* x, uint32_t d, uint64_t pos)
{
    const uint32_t half = d / 2;
    std::vector<double> r(d);
    for (uint32_t i = 0; i < half; ++i) {
        double a = num::bf16ToFloat(x[i]), c = num::bf16ToFloat(x[half + i]);
        ref::rotate(a, c, pos, i, d, kRopeTheta);
        r[i] = a;
        r[half + i] = c;
    }
    return r;
}

// qHeads/kvHeads heads of d (rotary over the whole head), `context` cached rows of which `rows` are
// read; q, the new keys and values in one buffer per token (q heads, then k, then v, then 8 spare
// elements, so the token stride is not the packed one).
Status checkOne(bool fp8, uint32_t qHeads, uint32_t kvHeads, uint32_t d, uint64_t context, uint64_t rows,
    uint32_t tokens, uint32_t splits, std::mt19937& rng, Report& rep, bool cudaCores = false)
{
    const uint32_t esz = fp8 ? 1 : 2, group = qHeads / kvHeads;
    const uint64_t stride = uint64_t(qHeads + 2 * kvHeads) * d + 8, pos = context - 1;
    auto qkv = randomBf16(tokens * stride, rng);
    const uint64_t cacheElems = uint64_t(tokens) * kvHeads * context * d;
    DevBuf dqkv, dk, dv, dout, ws, dtab;
    GS_TRY(upload(dqkv, qkv));
    GS_TRY(dk.alloc(cacheElems * esz));
    GS_TRY(dv.alloc(cacheElems * esz));
    GS_CUDA(fp8 ? launchFillBytes(dk.as<uint8_t>(), cacheElems, true, rng(), nullptr)
                : launchFillBf16(dk.as<uint16_t>(), cacheElems, 1.f, rng(), nullptr));
    GS_CUDA(fp8 ? launchFillBytes(dv.as<uint8_t>(), cacheElems, true, rng(), nullptr)
                : launchFillBf16(dv.as<uint16_t>(), cacheElems, 1.f, rng(), nullptr));
    GS_TRY(upload(dtab, ropeCosSinTable(pos, d, kRopeTheta)));
    GS_TRY(dout.alloc(uint64_t(tokens) * qHeads * d * 2));
    GS_TRY(ws.alloc(attentionWorkspaceFloats(tokens, qHeads, d) * 4));
    AttentionParams p;
    p.fp8 = fp8;
    p.q = dqkv.as<uint16_t>();
    p.qHeadStride = d;
    p.qTokenStride = stride;
    p.kCache = dk.as<uint8_t>();
    p.vCache = dv.as<uint8_t>();
    p.kRowStride = p.vRowStride = d;
    p.context = context;
    p.rows = rows;
    p.qHeads = qHeads;
    p.kvHeads = kvHeads;
    p.dk = p.dv = d;
    p.tokens = tokens;
    p.scale = 1.f / std::sqrt(static_cast<float>(d));
    p.splits = splits;
    p.workspace = ws.as<float>();
    p.out = dout.as<uint16_t>();
    p.ropeCosSin = dtab.as<float>();
    p.newK = p.q + uint64_t(qHeads) * d;
    p.newV = p.q + uint64_t(qHeads + kvHeads) * d;
    p.newTokenStride = stride;
    p.cudaCores = cudaCores;
    GS_CUDA(launchAttention(p, 132, nullptr));
    std::vector<uint8_t> kh, vh;
    std::vector<uint16_t> oh;
    GS_TRY(download(kh, dk));
    GS_TRY(download(vh, dv));
    GS_TRY(download(oh, dout));
    auto value = [&](const std::vector<uint8_t>& c, uint64_t i) {
        return fp8 ? num::e4m3ToFloat(c[i]) : num::bf16ToFloat(reinterpret_cast<const uint16_t*>(c.data())[i]);
    };
    // The appended rows: rotated keys and copied values.
    std::vector<double> rowOut, rowRef;
    for (uint32_t b = 0; b < tokens; ++b)
        for (uint32_t g = 0; g < kvHeads; ++g) {
            const uint16_t* nk = qkv.data() + b * stride + uint64_t(qHeads + g) * d;
            const uint16_t* nv = qkv.data() + b * stride + uint64_t(qHeads + kvHeads + g) * d;
            const uint64_t row = ((uint64_t(b) * kvHeads + g) * context + pos) * d;
            const std::vector<double> k = rotatedHead(nk, d, pos);
            for (uint32_t j = 0; j < d; ++j) {
                rowRef.push_back(k[j]);
                rowOut.push_back(value(kh, row + j));
                rowRef.push_back(num::bf16ToFloat(nv[j]));
                rowOut.push_back(value(vh, row + j));
            }
        }
    const std::string kernel = attentionKernelName(false, d, d, cudaCores);
    const std::string shape = std::string(fp8 ? " fp8" : " bf16") + " heads " + std::to_string(qHeads) + "/"
        + std::to_string(kvHeads) + " d " + std::to_string(d) + " rows " + std::to_string(rows) + "/"
        + std::to_string(context) + " splits " + (splits ? std::to_string(splits) : std::string("auto"));
    rep.error(kernel + " rope append" + shape, ref::relativeError(rowOut, rowRef), fp8 ? 8e-2 : 1e-2);
    // Attention over the cache as written (the new row included when it is read), rotated queries.
    std::vector<double> ref;
    for (uint32_t b = 0; b < tokens; ++b)
        for (uint32_t h = 0; h < qHeads; ++h) {
            const uint32_t g = h / group;
            const std::vector<double> qv = rotatedHead(qkv.data() + b * stride + uint64_t(h) * d, d, pos);
            const uint64_t off = (uint64_t(b) * kvHeads + g) * context * d * esz;
            auto o = ref::attentionHead(qv, kh.data() + off, d, vh.data() + off, d, rows, d, d, fp8, p.scale);
            ref.insert(ref.end(), o.begin(), o.end());
        }
    rep.error(kernel + " rope" + shape, ref::relativeError(toDouble(oh), ref), 1e-2);
    return Status::ok();
}

} // namespace

Status checkAttentionRope(std::mt19937& rng, Report& rep)
{
    // Two tokens, one head tile, the new row in the last split; on both kernels.
    GS_TRY(checkOne(false, 8, 2, 128, 300, 300, 2, 0, rng, rep));
    GS_TRY(checkOne(false, 8, 2, 128, 300, 300, 2, 0, rng, rep, true));
    // 16 heads per KV head (a full tensor-core head tile), FP8, the new row inside a split.
    GS_TRY(checkOne(true, 32, 2, 128, 200, 200, 1, 7, rng, rep));
    // Two head tiles per KV head (both read the new row, one appends it), a given split count: 32
    // query heads per KV head on tensor cores, 16 on CUDA cores.
    GS_TRY(checkOne(false, 64, 2, 128, 257, 257, 1, 5, rng, rep));
    GS_TRY(checkOne(false, 32, 2, 128, 257, 257, 1, 5, rng, rep, true));
    // FP8 cache, head dim 64, a window shorter than the cache: the new row is appended, not read.
    GS_TRY(checkOne(true, 12, 4, 64, 140, 100, 2, 0, rng, rep));
    // Head dim 256, odd group.
    GS_TRY(checkOne(false, 6, 2, 256, 96, 96, 1, 3, rng, rep));
    return Status::ok();
}

} // namespace gapscope::kernels::check
