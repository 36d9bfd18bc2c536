// SPDX-License-Identifier: MIT
#include "kernels/selfcheck.h"
#include "kernels/attention.h"
#include "kernels/cpureference.h"
#include "kernels/cudastatus.h"
#include "kernels/numerics.h"
#include "kernels/ops.h"
#include "kernels/selfcheckattention.h"
#include "kernels/selfcheckgemv.h"
#include "kernels/selfcheckutil.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

namespace gapscope::kernels {

namespace {

using model::Precision;
using namespace check;

// fused_add_rmsnorm: the normalised output and the updated residual (width 96 takes the vector
// path, width 100 the scalar one); then SiLU and mul.
Status checkNorm(uint32_t width, uint32_t ld, std::mt19937& rng, Report& rep)
{
    const uint32_t tokens = 3;
    auto in = randomBf16(uint64_t(tokens) * ld, rng), res = randomBf16(uint64_t(tokens) * width, rng);
    auto gamma = randomBf16(width, rng);
    DevBuf din, dres, dout, dg;
    GS_TRY(upload(din, in));
    GS_TRY(upload(dres, res));
    GS_TRY(upload(dg, gamma));
    GS_TRY(dout.alloc(in.size() * 2));
    RmsNormParams p { din.as<uint16_t>(), dres.as<uint16_t>(), dout.as<uint16_t>(), dg.as<uint16_t>(), width, ld,
        tokens, true, false, 1e-6f };
    GS_CUDA(launchRmsNorm(p, nullptr));
    std::vector<uint16_t> out, resOut;
    GS_TRY(download(out, dout));
    GS_TRY(download(resOut, dres));
    std::vector<double> o, r, ro, rr;
    for (uint32_t t = 0; t < tokens; ++t) {
        std::vector<double> x(width);
        for (uint32_t j = 0; j < width; ++j) {
            x[j] = num::bf16ToFloat(
                num::floatToBf16(num::bf16ToFloat(in[t * ld + j]) + num::bf16ToFloat(res[t * width + j])));
            rr.push_back(x[j]);
            ro.push_back(num::bf16ToFloat(resOut[t * width + j]));
        }
        auto n = ref::rmsnorm(x, gamma.data(), 1e-6);
        r.insert(r.end(), n.begin(), n.end());
        for (uint32_t j = 0; j < width; ++j)
            o.push_back(num::bf16ToFloat(out[t * ld + j]));
    }
    const std::string shape = std::to_string(tokens) + "x" + std::to_string(width) + " (ld " + std::to_string(ld) + ")";
    rep.error("fused_add_rmsnorm " + shape, ref::relativeError(o, r), 1e-2);
    rep.error("fused_add_rmsnorm residual " + shape, ref::relativeError(ro, rr), 1e-6);
    if (width % 8 != 0)
        return Status::ok();
    // SiLU and mul over two rows.
    auto gu = randomBf16(2 * 2 * 80, rng, 3.f);
    DevBuf dgu, dact;
    GS_TRY(upload(dgu, gu));
    GS_TRY(dact.alloc(2 * 80 * 2));
    GS_CUDA(launchSiluMul(dgu.as<uint16_t>(), dact.as<uint16_t>(), 80, 2, nullptr, 1, nullptr));
    std::vector<uint16_t> act;
    GS_TRY(download(act, dact));
    std::vector<double> ao, ar;
    for (uint32_t rr = 0; rr < 2; ++rr)
        for (uint32_t j = 0; j < 80; ++j) {
            ar.push_back(ref::silu(num::bf16ToFloat(gu[rr * 160 + j])) * num::bf16ToFloat(gu[rr * 160 + 80 + j]));
            ao.push_back(num::bf16ToFloat(act[rr * 80 + j]));
        }
    rep.error("silu_and_mul 2x80", ref::relativeError(ao, ar), 1e-2);
    return Status::ok();
}

// qTokenStride: elements between two tokens' queries, 0 = packed (qHeads*dk); larger as the sim's
// GQA reads q inside the fused qkv_proj output.
// cudaCores: GQA on the CUDA-core rows kernel where the tensor-core kernel would serve.
Status checkAttention(bool mla, bool fp8, uint32_t qHeads, uint32_t kvHeads, uint32_t dk, uint32_t dv, uint64_t context,
    uint64_t rows, uint32_t tokens, uint32_t splits, std::mt19937& rng, Report& rep, uint64_t qTokenStride = 0,
    bool cudaCores = false)
{
    const uint32_t esz = fp8 ? 1 : 2;
    const uint64_t qts = qTokenStride ? qTokenStride : uint64_t(qHeads) * dk;
    auto q = randomBf16(uint64_t(tokens) * qts, rng);
    const uint64_t kElems = uint64_t(tokens) * kvHeads * context * dk,
                   vElems = uint64_t(tokens) * kvHeads * context * dv;
    DevBuf dq, dk_, dv_, dout, ws;
    GS_TRY(upload(dq, q));
    GS_TRY(dk_.alloc(kElems * esz));
    GS_TRY(dv_.alloc(mla ? 16 : vElems * esz));
    GS_CUDA(fp8 ? launchFillBytes(dk_.as<uint8_t>(), kElems, true, rng(), nullptr)
                : launchFillBf16(dk_.as<uint16_t>(), kElems, 1.f, rng(), nullptr));
    if (!mla)
        GS_CUDA(fp8 ? launchFillBytes(dv_.as<uint8_t>(), vElems, true, rng(), nullptr)
                    : launchFillBf16(dv_.as<uint16_t>(), vElems, 1.f, rng(), nullptr));
    GS_TRY(dout.alloc(uint64_t(tokens) * qHeads * dv * 2));
    GS_TRY(ws.alloc(attentionWorkspaceFloats(tokens, qHeads, dv) * 4));
    AttentionParams p;
    p.mla = mla;
    p.fp8 = fp8;
    p.q = dq.as<uint16_t>();
    p.qHeadStride = dk;
    p.qTokenStride = qts;
    p.kCache = dk_.as<uint8_t>();
    p.vCache = mla ? p.kCache : dv_.as<uint8_t>();
    p.kRowStride = dk;
    p.vRowStride = mla ? dk : dv;
    p.context = context;
    p.rows = rows;
    p.qHeads = qHeads;
    p.kvHeads = kvHeads;
    p.dk = dk;
    p.dv = dv;
    p.tokens = tokens;
    p.scale = 1.f / std::sqrt(static_cast<float>(dk));
    p.splits = splits;
    p.workspace = ws.as<float>();
    p.out = dout.as<uint16_t>();
    p.cudaCores = cudaCores;
    GS_CUDA(launchAttention(p, 132, nullptr));
    std::vector<uint8_t> kh, vh;
    std::vector<uint16_t> oh;
    GS_TRY(download(kh, dk_));
    if (!mla)
        GS_TRY(download(vh, dv_));
    GS_TRY(download(oh, dout));
    std::vector<double> ref;
    for (uint32_t b = 0; b < tokens; ++b)
        for (uint32_t h = 0; h < qHeads; ++h) {
            const uint32_t g = h / (qHeads / kvHeads);
            std::vector<double> qv(dk);
            for (uint32_t d = 0; d < dk; ++d)
                qv[d] = num::bf16ToFloat(q[b * qts + uint64_t(h) * dk + d]);
            const uint8_t* kb = kh.data() + (uint64_t(b) * kvHeads + g) * context * dk * esz;
            const uint8_t* vb = mla ? kb : vh.data() + (uint64_t(b) * kvHeads + g) * context * dv * esz;
            auto o = ref::attentionHead(qv, kb, dk, vb, mla ? dk : dv, rows, dk, dv, fp8, p.scale);
            ref.insert(ref.end(), o.begin(), o.end());
        }
    const std::string name = std::string(attentionKernelName(mla, dk, dv, cudaCores)) + (fp8 ? " fp8" : " bf16") + " heads " + std::to_string(qHeads) + "/" + std::to_string(kvHeads) + " rows "
        + std::to_string(rows) + " splits " + (splits ? std::to_string(splits) : std::string("auto"))
        + (qTokenStride ? " q token stride " + std::to_string(qTokenStride) : std::string());
    rep.error(name, ref::relativeError(toDouble(oh), ref), 1e-2);
    return Status::ok();
}

Status checkRouter(std::mt19937& rng, Report& rep)
{
    const uint32_t E = 64, k = 6, T = 3, slots = 18, width = 40;
    auto logits = randomBf16(uint64_t(T) * E, rng, 3.f);
    DevBuf dl, se, sc, si, sw, eo, sh, out;
    GS_TRY(upload(dl, logits));
    GS_TRY(se.alloc(slots * 4));
    GS_TRY(sc.alloc(4));
    GS_TRY(si.alloc(slots * 4));
    GS_TRY(sw.alloc(T * slots * 4));
    RouterParams p { dl.as<uint16_t>(), E, k, T, slots, true, se.as<int32_t>(), sc.as<int32_t>(), si.as<int32_t>(),
        sw.as<float>() };
    GS_CUDA(launchRouterTopk(p, nullptr));
    std::vector<int32_t> ids, count;
    std::vector<float> weights;
    GS_TRY(download(ids, si));
    GS_TRY(download(count, sc));
    GS_TRY(download(weights, sw));
    std::vector<int> used(E, 0);
    std::vector<ref::Routed> routed;
    for (uint32_t t = 0; t < T; ++t) {
        std::vector<double> lg(logits.begin() + t * E, logits.begin() + (t + 1) * E);
        for (auto& v : lg)
            v = num::bf16ToFloat(static_cast<uint16_t>(v));
        routed.push_back(ref::routeTopk(lg, k));
        for (int e : routed.back().experts)
            used[e] = 1;
    }
    std::vector<int> expect;
    for (uint32_t e = 0; e < E; ++e)
        if (used[e])
            expect.push_back(static_cast<int>(e));
    bool idsOk = count[0] == static_cast<int32_t>(expect.size());
    for (size_t s = 0; idsOk && s < expect.size(); ++s)
        idsOk = ids[s] == expect[s];
    rep.check(idsOk, "moe_router_topk 3 tokens top-6 of 64", std::to_string(count[0]) + " distinct experts");
    std::vector<double> wo, wr;
    for (uint32_t t = 0; t < T; ++t)
        for (size_t r = 0; r < routed[t].experts.size(); ++r) {
            const size_t slot = std::lower_bound(expect.begin(), expect.end(), routed[t].experts[r]) - expect.begin();
            wr.push_back(routed[t].weights[r]);
            wo.push_back(weights[t * slots + slot]);
        }
    rep.error("moe_router_topk weights", ref::relativeError(wo, wr), 1e-4);
    // Combine: sum over slots of weight * expert output, plus the shared expert.
    auto expOut = randomBf16(uint64_t(slots) * T * width, rng), shared = randomBf16(uint64_t(T) * width, rng);
    GS_TRY(upload(eo, expOut));
    GS_TRY(upload(sh, shared));
    GS_TRY(out.alloc(T * width * 2));
    CombineParams c { eo.as<uint16_t>(), sw.as<float>(), sc.as<int32_t>(), sh.as<uint16_t>(), out.as<uint16_t>(), width,
        T, slots };
    GS_CUDA(launchMoeCombine(c, nullptr));
    std::vector<uint16_t> oh;
    GS_TRY(download(oh, out));
    std::vector<double> ref;
    for (uint32_t t = 0; t < T; ++t)
        for (uint32_t j = 0; j < width; ++j) {
            double a = num::bf16ToFloat(shared[t * width + j]);
            for (int s = 0; s < count[0]; ++s)
                a += weights[t * slots + s] * num::bf16ToFloat(expOut[(uint64_t(s) * T + t) * width + j]);
            ref.push_back(a);
        }
    rep.error("moe_combine", ref::relativeError(toDouble(oh), ref), 1e-2);
    return Status::ok();
}

Status checkSampling(std::mt19937& rng, Report& rep)
{
    const uint32_t T = 3, V = 5000, width = 24;
    auto logits = randomBf16(uint64_t(T) * V, rng, 4.f);
    DevBuf dl, pairs, next, table, ids, emb;
    GS_TRY(upload(dl, logits));
    GS_TRY(pairs.alloc(T * sizeof(SamplePair)));
    GS_TRY(next.alloc(T * 4));
    GS_CUDA(launchSampleLocal(dl.as<uint16_t>(), V, 1000, T, pairs.as<SamplePair>(), nullptr));
    GS_CUDA(launchSampleFinal(pairs.as<SamplePair>(), 1, T, next.as<int32_t>(), nullptr));
    std::vector<int32_t> got;
    GS_TRY(download(got, next));
    bool ok = true;
    for (uint32_t t = 0; t < T; ++t) {
        std::vector<double> row(V);
        for (uint32_t j = 0; j < V; ++j)
            row[j] = num::bf16ToFloat(logits[t * V + j]);
        ok = ok && got[t] == static_cast<int32_t>(1000 + ref::argmax(row));
    }
    rep.check(ok, "sampling_argmax 3x5000", ok ? "indices match" : "index mismatch");
    auto tab = randomBf16(uint64_t(10) * width, rng);
    GS_TRY(upload(table, tab));
    GS_TRY(upload(ids, std::vector<int32_t> { 102, 95, 109 }));
    GS_TRY(emb.alloc(T * width * 2));
    GS_CUDA(launchEmbedding(ids.as<int32_t>(), table.as<uint16_t>(), 100, 10, width, T, emb.as<uint16_t>(), nullptr));
    std::vector<uint16_t> e;
    GS_TRY(download(e, emb));
    bool eok = true;
    for (uint32_t j = 0; j < width; ++j)
        eok = eok && e[j] == tab[2 * width + j] && e[width + j] == 0 && e[2 * width + j] == tab[9 * width + j];
    rep.check(eok, "embedding_lookup vocab slice [100,110)", eok ? "rows match, foreign ids zero" : "mismatch");
    return Status::ok();
}

Status checkRopeMla(std::mt19937& rng, Report& rep)
{
    const uint32_t T = 2, H = 3, nope = 128, rope = 64, kvl = 512, w = kvl + rope, qs = nope + rope;
    const uint64_t ctx = 10;
    auto q = randomBf16(uint64_t(T) * H * qs, rng), kv = randomBf16(uint64_t(T) * w, rng);
    DevBuf dq, dkv, dql, cache;
    GS_TRY(upload(dq, q));
    GS_TRY(upload(dkv, kv));
    GS_TRY(dql.alloc(uint64_t(T) * H * w * 2));
    GS_TRY(cache.alloc(uint64_t(T) * ctx * w * 2));
    RopeParams p;
    p.mla = true;
    p.tokens = T;
    p.qHeads = H;
    p.ropeDim = rope;
    p.context = ctx;
    p.q = dq.as<uint16_t>();
    p.qStride = qs;
    p.qRopeOffset = nope;
    p.kvLatent = kvl;
    p.k = dkv.as<uint16_t>();
    p.qLat = dql.as<uint16_t>();
    p.kCache = cache.as<uint8_t>();
    GS_CUDA(launchRopeAppend(p, nullptr));
    std::vector<uint16_t> ql, ch;
    GS_TRY(download(ql, dql));
    GS_TRY(download(ch, cache));
    std::vector<double> out, ref;
    for (uint32_t b = 0; b < T; ++b) {
        const uint16_t* row = ch.data() + (uint64_t(b) * ctx + ctx - 1) * w;
        for (uint32_t j = 0; j < kvl; ++j) {
            out.push_back(num::bf16ToFloat(row[j]));
            ref.push_back(num::bf16ToFloat(kv[b * w + j]));
        }
        for (uint32_t i = 0; i < rope / 2; ++i) {
            double a = num::bf16ToFloat(kv[b * w + kvl + i]), c = num::bf16ToFloat(kv[b * w + kvl + rope / 2 + i]);
            ref::rotate(a, c, ctx - 1, i, rope, 10000.0);
            ref.push_back(a);
            ref.push_back(c);
            out.push_back(num::bf16ToFloat(row[kvl + i]));
            out.push_back(num::bf16ToFloat(row[kvl + rope / 2 + i]));
            for (uint32_t h = 0; h < H; ++h) {
                const uint16_t* qq = q.data() + (uint64_t(b) * H + h) * qs + nope;
                double x = num::bf16ToFloat(qq[i]), y = num::bf16ToFloat(qq[rope / 2 + i]);
                ref::rotate(x, y, ctx - 1, i, rope, 10000.0);
                ref.push_back(x);
                ref.push_back(y);
                const uint16_t* lq = ql.data() + (uint64_t(b) * H + h) * w + kvl;
                out.push_back(num::bf16ToFloat(lq[i]));
                out.push_back(num::bf16ToFloat(lq[rope / 2 + i]));
            }
        }
    }
    rep.error("rope_kv_append mla (cache row, rotated q)", ref::relativeError(out, ref), 1e-2);
    return Status::ok();
}

// rope_kv_append GQA: q rotated in place, the new key rotated and the new value copied into the
// caches at position context-1. Packed: q, k and v in buffers of their own; fused: all three inside
// one qkv_proj output row per token (q | k | v, token stride (H + 2G)*hd), as the sim runs it, with
// three tokens so a wrong stride reads another token's row; the k and v parts must stay as they were.
Status checkRopeGqa(bool fused, std::mt19937& rng, Report& rep)
{
    const uint32_t T = 3, H = 6, G = 2, hd = 128, half = hd / 2;
    const uint64_t ctx = 10, qRow = uint64_t(H) * hd, kvRow = uint64_t(G) * hd;
    const uint64_t qts = fused ? qRow + 2 * kvRow : qRow, kvts = fused ? qts : kvRow;
    auto q = randomBf16(T * qts, rng); // fused: the whole qkv_proj output
    const auto k = fused ? std::vector<uint16_t>() : randomBf16(T * kvRow, rng);
    const auto v = fused ? std::vector<uint16_t>() : randomBf16(T * kvRow, rng);
    const uint16_t* kh = fused ? q.data() + qRow : k.data();
    const uint16_t* vh = fused ? q.data() + qRow + kvRow : v.data();
    DevBuf dq, dk, dv, kc, vc;
    GS_TRY(upload(dq, q));
    if (!fused) {
        GS_TRY(upload(dk, k));
        GS_TRY(upload(dv, v));
    }
    GS_TRY(kc.alloc(T * G * ctx * hd * 2));
    GS_TRY(vc.alloc(T * G * ctx * hd * 2));
    RopeParams p;
    p.tokens = T;
    p.qHeads = H;
    p.kvHeads = G;
    p.headDim = p.ropeDim = hd;
    p.context = ctx;
    p.q = dq.as<uint16_t>();
    p.k = fused ? p.q + qRow : dk.as<uint16_t>();
    p.v = fused ? p.q + qRow + kvRow : dv.as<uint16_t>();
    if (fused)
        p.qTokenStride = p.kTokenStride = p.vTokenStride = qts;
    p.kCache = kc.as<uint8_t>();
    p.vCache = vc.as<uint8_t>();
    GS_CUDA(launchRopeAppend(p, nullptr));
    std::vector<uint16_t> qo, kco, vco;
    GS_TRY(download(qo, dq));
    GS_TRY(download(kco, kc));
    GS_TRY(download(vco, vc));
    std::vector<double> out, ref;
    for (uint32_t b = 0; b < T; ++b) {
        for (uint32_t h = 0; h < H; ++h)
            for (uint32_t i = 0; i < half; ++i) {
                const uint64_t e = b * qts + uint64_t(h) * hd + i;
                double x = num::bf16ToFloat(q[e]), y = num::bf16ToFloat(q[e + half]);
                ref::rotate(x, y, ctx - 1, i, hd, 10000.0);
                ref.insert(ref.end(), { x, y });
                out.insert(out.end(), { num::bf16ToFloat(qo[e]), num::bf16ToFloat(qo[e + half]) });
            }
        for (uint32_t g = 0; g < G; ++g) {
            const uint64_t row = ((uint64_t(b) * G + g) * ctx + ctx - 1) * hd, e = b * kvts + uint64_t(g) * hd;
            for (uint32_t i = 0; i < half; ++i) {
                double x = num::bf16ToFloat(kh[e + i]), y = num::bf16ToFloat(kh[e + half + i]);
                ref::rotate(x, y, ctx - 1, i, hd, 10000.0);
                ref.insert(ref.end(), { x, y });
                out.insert(out.end(), { num::bf16ToFloat(kco[row + i]), num::bf16ToFloat(kco[row + half + i]) });
            }
            for (uint32_t j = 0; j < hd; ++j) {
                ref.push_back(num::bf16ToFloat(vh[e + j]));
                out.push_back(num::bf16ToFloat(vco[row + j]));
            }
        }
    }
    const std::string name = std::string("rope_kv_append gqa ") + (fused ? "fused qkv" : "packed") + " 3 tokens, heads "
        + std::to_string(H) + "/" + std::to_string(G) + " (rotated q, cache rows)";
    rep.error(name, ref::relativeError(out, ref), 1e-2);
    if (fused) {
        bool kept = true;
        for (uint32_t b = 0; b < T; ++b)
            for (uint64_t j = qRow; j < qts; ++j)
                kept = kept && qo[b * qts + j] == q[b * qts + j];
        rep.check(kept, "rope_kv_append gqa fused qkv: k and v parts", kept ? "unchanged" : "written");
    }
    return Status::ok();
}

Status checkIndexerScan(std::mt19937& rng, Report& rep)
{
    const uint32_t T = 2, H = 40, D = 128;
    const uint64_t ctx = 300, rows = 290;
    auto q = randomBf16(uint64_t(T) * H * D, rng), w = randomBf16(uint64_t(T) * H, rng);
    std::vector<float> sc(T * ctx);
    std::uniform_real_distribution<float> u(0.5f, 1.5f);
    for (auto& v : sc)
        v = u(rng);
    DevBuf dq, dw, keys, scales, out;
    GS_TRY(upload(dq, q));
    GS_TRY(upload(dw, w));
    GS_TRY(upload(scales, sc));
    GS_TRY(keys.alloc(T * ctx * D));
    GS_TRY(out.alloc(T * rows * 2));
    GS_CUDA(launchFillBytes(keys.as<uint8_t>(), T * ctx * D, true, rng(), nullptr));
    IndexerScanParams p { dq.as<uint16_t>(), dw.as<uint16_t>(), keys.as<uint8_t>(), scales.as<float>(),
        out.as<uint16_t>(), H, D, T, ctx, rows };
    GS_CUDA(launchIndexerScan(p, nullptr));
    std::vector<uint8_t> kh;
    std::vector<uint16_t> oh;
    GS_TRY(download(kh, keys));
    GS_TRY(download(oh, out));
    std::vector<double> ref;
    for (uint32_t t = 0; t < T; ++t)
        for (uint64_t r = 0; r < rows; ++r) {
            double acc = 0;
            for (uint32_t h = 0; h < H; ++h) {
                double d = 0;
                for (uint32_t j = 0; j < D; ++j)
                    d += num::bf16ToFloat(q[(uint64_t(t) * H + h) * D + j])
                        * num::e4m3ToFloat(kh[(t * ctx + r) * D + j]);
                acc += num::bf16ToFloat(w[t * H + h]) * std::max(d, 0.0);
            }
            ref.push_back(acc * sc[t * ctx + r]);
        }
    rep.error("dsa_indexer_scores 40 heads x 128, 290 rows", ref::relativeError(toDouble(oh), ref), 1e-2);
    return Status::ok();
}

Status checkNccl(uint32_t rank, uint32_t ranks, const ncclUniqueId& id, Report& rep)
{
    if (ranks < 2)
        return Status::ok();
    ncclComm_t comm = nullptr;
    GS_NCCL(ncclCommInitRank(&comm, static_cast<int>(ranks), id, static_cast<int>(rank)));
    const uint32_t n = 4096;
    std::vector<uint16_t> v(n);
    for (uint32_t j = 0; j < n; ++j)
        v[j] = num::floatToBf16(0.25f * static_cast<float>((rank + 1) * (j % 7)));
    DevBuf d, pairsIn, pairsOut;
    Status st = upload(d, v);
    if (st)
        st = upload(pairsIn, std::vector<int32_t> { static_cast<int32_t>(rank), static_cast<int32_t>(10 * rank) });
    if (st)
        st = pairsOut.alloc(8 * ranks);
    ncclResult_t r = ncclSuccess;
    if (st)
        r = ncclAllReduce(d.p, d.p, n, ncclBfloat16, ncclSum, comm, nullptr);
    if (st && r == ncclSuccess)
        r = ncclAllGather(pairsIn.p, pairsOut.p, 8, ncclUint8, comm, nullptr);
    if (st && r != ncclSuccess)
        st = Status::error(std::string("NCCL: ") + ncclGetErrorString(r));
    std::vector<uint16_t> out;
    std::vector<int32_t> gathered;
    if (st)
        st = download(out, d);
    if (st)
        st = download(gathered, pairsOut);
    ncclCommDestroy(comm);
    GS_TRY(st);
    const double s = ranks * (ranks + 1) / 2.0;
    bool ok = true;
    for (uint32_t j = 0; j < n; ++j)
        ok = ok && std::fabs(num::bf16ToFloat(out[j]) - 0.25 * s * (j % 7)) <= 0.01 * (1 + 0.25 * s * (j % 7));
    for (uint32_t q = 0; q < ranks; ++q)
        ok = ok && gathered[2 * q] == static_cast<int32_t>(q) && gathered[2 * q + 1] == static_cast<int32_t>(10 * q);
    rep.check(ok, "nccl allreduce bf16 + allgather over " + std::to_string(ranks) + " ranks",
        ok ? "sums and gathered pairs match" : "mismatch");
    return Status::ok();
}

} // namespace

Status SelfCheck::run(
    uint32_t rank, uint32_t ranks, const ncclUniqueId& id, std::vector<std::string>& lines, int& failures)
{
    int count = 0;
    GS_CUDA(cudaGetDeviceCount(&count));
    if (count == 0)
        return Status::error("no CUDA device");
    GS_CUDA(cudaSetDevice(static_cast<int>(rank % static_cast<uint32_t>(count))));
    GS_CUDA(prepareAttentionKernels());
    check::Report rep { lines, failures };
    std::mt19937 rng(1234 + rank);
    GS_TRY(check::checkGemvs(rng, rep));
    GS_TRY(checkNorm(96, 128, rng, rep));
    GS_TRY(checkNorm(100, 104, rng, rep));
    GS_TRY(checkAttention(true, false, 20, 1, 576, 512, 300, 250, 2, 3, rng, rep));
    GS_TRY(checkAttention(true, true, 16, 1, 576, 512, 200, 200, 1, 0, rng, rep));
    // GQA on tensor cores: groups of 4 and 3 (padded heads), 16 (one full head tile), 24 (two tiles,
    // the second half full), rows not a multiple of 16, splits without rows (50 splits of 150 rows).
    GS_TRY(checkAttention(false, false, 8, 2, 128, 128, 200, 150, 2, 0, rng, rep));
    GS_TRY(checkAttention(false, true, 12, 4, 64, 64, 100, 77, 1, 2, rng, rep));
    GS_TRY(checkAttention(false, false, 32, 2, 128, 128, 300, 293, 1, 0, rng, rep));
    GS_TRY(checkAttention(false, true, 48, 2, 128, 128, 150, 150, 2, 50, rng, rep));
    GS_TRY(checkAttention(false, false, 6, 2, 64, 64, 1000, 999, 1, 3, rng, rep));
    // The same shapes on the CUDA-core rows kernel; it alone serves head dim 256 (and two head tiles).
    GS_TRY(checkAttention(false, false, 8, 2, 128, 128, 200, 150, 2, 0, rng, rep, 0, true));
    GS_TRY(checkAttention(false, true, 12, 4, 64, 64, 100, 77, 1, 2, rng, rep, 0, true));
    GS_TRY(checkAttention(false, false, 6, 2, 256, 256, 130, 130, 1, 0, rng, rep));
    GS_TRY(checkAttention(false, true, 32, 2, 128, 128, 90, 90, 2, 0, rng, rep, 0, true));
    // GQA on the tiled kernel: head dim 96.
    GS_TRY(checkAttention(false, false, 8, 2, 96, 96, 120, 100, 1, 0, rng, rep));
    // q read inside the fused qkv_proj output: token stride (8 + 2*2) * 128.
    GS_TRY(checkAttention(false, false, 8, 2, 128, 128, 200, 150, 2, 0, rng, rep, (8 + 2 * 2) * 128));
    GS_TRY(checkRouter(rng, rep));
    GS_TRY(checkSampling(rng, rep));
    GS_TRY(checkRopeMla(rng, rep));
    GS_TRY(checkRopeGqa(false, rng, rep));
    GS_TRY(checkRopeGqa(true, rng, rep));
    GS_TRY(check::checkAttentionRope(rng, rep));
    GS_TRY(checkIndexerScan(rng, rep));
    GS_TRY(check::checkSlowTail(rng, rep));
    GS_TRY(checkNccl(rank, ranks, id, rep));
    return Status::ok();
}

} // namespace gapscope::kernels
