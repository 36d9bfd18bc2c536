// SPDX-License-Identifier: MIT
// SelfCheck's GEMV part: every format and schedule against the CPU reference, two GEMVs chained by
// PDL, and the slow-kernel tail (see selfcheck.h).
#include "kernels/cpureference.h"
#include "kernels/gemv.h"
#include "kernels/ops.h"
#include "kernels/selfcheckgemv.h"
#include "kernels/selfcheckutil.h"

#include <cmath>

namespace gapscope::kernels::check {

namespace {

using model::Precision;

Status checkGemv(Precision prec, uint32_t rows, uint32_t cols, uint32_t tokens, uint32_t groups, bool indirect,
    std::mt19937& rng, Report& rep, uint32_t schedule = 0, uint32_t inflight = 0)
{
    WeightLayout l;
    std::string why;
    if (!WeightLayout::make(prec, rows, cols, l, &why))
        return Status::error(why);
    const uint64_t scaleOff = (l.valueBytes + 255) / 256 * 256,
                   groupBytes = scaleOff + (l.scaleBytes + 255) / 256 * 256;
    const uint32_t pool = indirect ? groups + 2 : groups;
    DevBuf w, x, y, slotExpert, slotCount;
    GS_TRY(w.alloc(groupBytes * pool));
    for (uint32_t g = 0; g < pool; ++g)
        GS_CUDA(launchFillWeights(
            l, w.as<uint8_t>() + g * groupBytes, w.as<uint8_t>() + g * groupBytes + scaleOff, rng(), nullptr));
    const uint64_t xGroup = indirect ? 0 : uint64_t(tokens) * cols;
    auto xs = randomBf16(xGroup * groups + uint64_t(tokens) * cols, rng);
    GS_TRY(upload(x, xs));
    std::vector<uint16_t> poison(uint64_t(groups) * tokens * rows, 0xffff);
    GS_TRY(upload(y, poison));
    const std::vector<int32_t> slots = { 3, 0, 2, 1, 4, 5, 6, 7 };
    const int32_t valid = indirect ? static_cast<int32_t>(groups) - 1 : static_cast<int32_t>(groups);
    GS_TRY(upload(slotExpert, slots));
    GS_TRY(upload(slotCount, std::vector<int32_t> { valid }));
    GemvParams p;
    p.values = w.as<uint8_t>();
    p.scales = w.as<uint8_t>() + scaleOff;
    p.valueGroupStride = p.scaleGroupStride = groupBytes;
    p.auxOffset = l.auxOffset;
    p.x = x.as<uint16_t>();
    p.xLd = cols;
    p.xGroupStride = xGroup;
    p.y = y.as<uint16_t>();
    p.yLd = rows;
    p.yGroupStride = uint64_t(tokens) * rows;
    p.rows = rows;
    p.cols = cols;
    p.tokens = tokens;
    p.groups = groups;
    if (indirect) {
        p.slotExpert = slotExpert.as<int32_t>();
        p.slotCount = slotCount.as<int32_t>();
    }
    p.schedule = schedule;
    p.inflight = inflight;
    GS_CUDA(launchGemv(prec, p, nullptr));
    std::vector<uint8_t> wh;
    std::vector<uint16_t> yh;
    GS_TRY(download(wh, w));
    GS_TRY(download(yh, y));
    std::vector<double> out, ref;
    bool untouched = true;
    for (uint32_t g = 0; g < groups; ++g) {
        const uint8_t* base = wh.data() + (indirect ? slots[g] : g) * groupBytes;
        const std::vector<uint16_t> yg(yh.begin() + g * tokens * rows, yh.begin() + (g + 1) * tokens * rows);
        if (static_cast<int32_t>(g) >= valid) {
            for (uint16_t v : yg)
                untouched = untouched && v == 0xffff;
            continue;
        }
        auto r = ref::gemv(l, base, base + scaleOff, xs.data() + g * xGroup, cols, tokens);
        ref.insert(ref.end(), r.begin(), r.end());
        auto o = toDouble(yg);
        out.insert(out.end(), o.begin(), o.end());
    }
    const std::string name = std::string(indirect ? "fused_moe_gemv " : "gemv ") + model::toString(prec) + " "
        + std::to_string(rows) + "x" + std::to_string(cols) + " tokens " + std::to_string(tokens) + " groups "
        + std::to_string(groups) + (schedule ? " schedule " + std::to_string(schedule) : std::string())
        + (inflight ? " inflight " + std::to_string(inflight) : std::string());
    rep.error(name, ref::relativeError(out, ref), 1e-2);
    if (indirect)
        rep.check(untouched, name + " empty slot", untouched ? "not written" : "written");
    return Status::ok();
}

// Two dependent GEMVs launched back to back with PDL (y1 = W1 x, y2 = W2 y1, both read by the
// sweep schedule): the second starts before the first ends and must still read the finished y1
// (y1 starts as NaN, so an early read shows).
Status checkGemvChain(std::mt19937& rng, Report& rep)
{
    WeightLayout l1, l2;
    WeightLayout::make(Precision::Bf16, 4096, 2048, l1, nullptr);
    WeightLayout::make(Precision::Bf16, 2048, 4096, l2, nullptr);
    DevBuf w1, w2, x, y1, y2;
    GS_TRY(w1.alloc(l1.valueBytes));
    GS_TRY(w2.alloc(l2.valueBytes));
    GS_CUDA(launchFillWeights(l1, w1.as<uint8_t>(), nullptr, rng(), nullptr));
    GS_CUDA(launchFillWeights(l2, w2.as<uint8_t>(), nullptr, rng(), nullptr));
    const auto xs = randomBf16(2048, rng);
    GS_TRY(upload(x, xs));
    GS_TRY(upload(y1, std::vector<uint16_t>(4096, 0xffff)));
    GS_TRY(upload(y2, std::vector<uint16_t>(2048, 0xffff)));
    GemvParams p;
    p.pdl = true;
    p.values = w1.as<uint8_t>();
    p.x = x.as<uint16_t>();
    p.xLd = 2048;
    p.y = y1.as<uint16_t>();
    p.yLd = p.rows = 4096;
    p.cols = 2048;
    GS_CUDA(launchGemv(Precision::Bf16, p, nullptr));
    p.values = w2.as<uint8_t>();
    p.x = y1.as<uint16_t>();
    p.xLd = p.cols = 4096;
    p.y = y2.as<uint16_t>();
    p.yLd = p.rows = 2048;
    GS_CUDA(launchGemv(Precision::Bf16, p, nullptr));
    std::vector<uint8_t> wh;
    std::vector<uint16_t> y1h, y2h;
    GS_TRY(download(wh, w2));
    GS_TRY(download(y1h, y1));
    GS_TRY(download(y2h, y2));
    const auto ref = ref::gemv(l2, wh.data(), nullptr, y1h.data(), 4096, 1);
    rep.error("gemv bf16 chain of two with PDL (4096x2048, 2048x4096)", ref::relativeError(toDouble(y2h), ref), 1e-2);
    return Status::ok();
}

} // namespace

Status checkGemvs(std::mt19937& rng, Report& rep)
{
    const Precision all[] = { Precision::Bf16, Precision::Fp16, Precision::Fp8, Precision::Fp8Block128,
        Precision::Nvfp4, Precision::Mxfp4, Precision::Int4G128 };
    for (Precision p : all) {
        GS_TRY(checkGemv(p, 70, 160, 1, 1, false, rng, rep));
        GS_TRY(checkGemv(p, 37, 384, 3, 2, false, rng, rep));
        GS_TRY(checkGemv(p, 4, 8192, 8, 1, false, rng, rep));
        GS_TRY(checkGemv(p, 130, 256, 2, 4, true, rng, rep));
        GS_TRY(checkGemv(p, 5000, 3072, 2, 1, false, rng, rep)); // persistent: more rows than resident warps
        GS_TRY(checkGemv(p, 1100, 3072, 1, 4, true, rng, rep)); // persistent, slots from the device
    }
    // The lean persistent kernel (bf16): more rows than resident warps, and several groups.
    GS_TRY(checkGemv(Precision::Bf16, 5000, 3072, 2, 1, false, rng, rep, 5));
    GS_TRY(checkGemv(Precision::Bf16, 1100, 4096, 8, 3, false, rng, rep, 5));
    GS_TRY(checkGemv(Precision::Bf16, 5000, 4096, 1, 1, false, rng, rep, 5, 4));
    // The sweep schedules (bf16): rows of 256, 512, 1024 and 2048 vectors, a last group of fewer rows.
    for (uint32_t schedule : { 3u, 4u }) {
        GS_TRY(checkGemv(Precision::Bf16, 1001, 4096, 3, 2, false, rng, rep, schedule));
        GS_TRY(checkGemv(Precision::Bf16, 1001, 4096, 1, 1, false, rng, rep, schedule, 4));
        GS_TRY(checkGemv(Precision::Bf16, 77, 2048, 8, 1, false, rng, rep, schedule));
        GS_TRY(checkGemv(Precision::Bf16, 33, 8192, 1, 3, false, rng, rep, schedule));
        GS_TRY(checkGemv(Precision::Bf16, 5, 16384, 2, 1, false, rng, rep, schedule));
    }
    // The sweep schedule over expert slots chosen on the device (bf16 routed experts).
    GS_TRY(checkGemv(Precision::Bf16, 300, 2048, 1, 4, true, rng, rep));
    GS_TRY(checkGemv(Precision::Bf16, 77, 4096, 3, 3, true, rng, rep));
    return checkGemvChain(rng, rep);
}

// A slowed GEMV must take `factor` times as long as the plain one, and report the extra it spun.
Status checkSlowTail(std::mt19937& rng, Report& rep)
{
    WeightLayout l;
    WeightLayout::make(Precision::Bf16, 8192, 4096, l, nullptr); // 64 MiB
    DevBuf w, x, y, tail, counter;
    GS_TRY(w.alloc(l.valueBytes));
    GS_TRY(x.alloc(4096 * 2));
    GS_TRY(y.alloc(8192 * 2));
    GS_TRY(counter.alloc(8));
    GS_CUDA(launchFillWeights(l, w.as<uint8_t>(), nullptr, rng(), nullptr));
    SlowTail t { ~0ull, 0u, 3.0f, counter.as<unsigned long long>() };
    GS_TRY(upload(tail, std::vector<SlowTail> { t }));
    GemvParams p;
    p.values = w.as<uint8_t>();
    p.x = x.as<uint16_t>();
    p.xLd = 4096;
    p.y = y.as<uint16_t>();
    p.yLd = 8192;
    p.rows = 8192;
    p.cols = 4096;
    cudaEvent_t e[3];
    for (auto& ev : e)
        GS_CUDA(cudaEventCreate(&ev));
    for (int i = 0; i < 3; ++i) // warm up
        GS_CUDA(launchGemv(Precision::Bf16, p, nullptr));
    GS_CUDA(cudaEventRecord(e[0]));
    GS_CUDA(launchGemv(Precision::Bf16, p, nullptr));
    GS_CUDA(cudaEventRecord(e[1]));
    p.tail = tail.as<SlowTail>();
    GS_CUDA(launchGemv(Precision::Bf16, p, nullptr));
    GS_CUDA(cudaEventRecord(e[2]));
    GS_CUDA(cudaEventSynchronize(e[2]));
    float plain = 0, slow = 0;
    GS_CUDA(cudaEventElapsedTime(&plain, e[0], e[1]));
    GS_CUDA(cudaEventElapsedTime(&slow, e[1], e[2]));
    for (auto& ev : e)
        cudaEventDestroy(ev);
    std::vector<unsigned long long> spun;
    GS_TRY(download(spun, counter));
    const double extraMs = (slow - plain), spunMs = spun[0] / 1e6;
    char b[160];
    std::snprintf(b, sizeof b, "plain %.1f us, slowed %.1f us (x%.2f), spun %.1f us", plain * 1e3, slow * 1e3,
        slow / plain, spunMs * 1e3);
    // The factor applies to the device-timed work (first block's start to the last block's end), so
    // against event-timed launches, which add a few microseconds of launch latency to both, the
    // ratio lands somewhat under 3; what the truth relies on is extra time == counted time.
    rep.check(std::fabs(extraMs - spunMs) <= 0.1 * spunMs + 0.005 && slow / plain > 2.2 && slow / plain < 3.5,
        "slow kernel tail factor 3", b);
    return Status::ok();
}


} // namespace gapscope::kernels::check
