// SPDX-License-Identifier: MIT
#include "capture/inject/replaytimer.h"

#include "capture/inject/activityconverter.h"
#include "capture/inject/boundedqueue.h"

#include <cuda.h>
#include <cupti.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>

namespace gapscope::capture::inject::replaytimer {

namespace {

constexpr uint32_t kSlots = 512;

struct Slot {
    CUevent start = nullptr;
    CUevent end = nullptr;
    CUcontext ctx = nullptr; // the context its events were created in
    CUstream stream = nullptr; // where the pair is recorded
    uint32_t correlation = 0;
    uint32_t streamId = 0;
    uint32_t contextId = 0;
    uint32_t deviceId = 0;
    uint32_t graphId = 0;
};

// A slot belongs to one party at a time: the free queue, the launching thread between begin() and
// end(), the done queue, the library thread (waiting or the chain's reference). The queues order it.
Slot g_slots[kSlots];
std::unique_ptr<BoundedQueue<uint32_t>> g_free;
std::unique_ptr<BoundedQueue<uint32_t>> g_done;
std::atomic<bool> g_running { false };
std::atomic<uint64_t> g_timed { 0 }, g_noSlot { 0 }, g_capturing { 0 }, g_failed { 0 };
thread_local int32_t t_slot = -1;

// The library thread's side.
struct Chain {
    CUcontext ctx = nullptr;
    CUstream anchorStream = nullptr;
    CUevent anchors[3] = { nullptr, nullptr, nullptr };
    CUevent ref = nullptr; // the newest resolved event (0: none yet, anchor first)
    int64_t refNs = 0;
    int32_t refSlot = -1; // the slot whose end event is `ref` (held back from the free queue)
};
Chain g_chain;
std::deque<uint32_t> g_waiting;

void release(uint32_t i)
{
    g_free->tryPush(i); // capacity >= kSlots: never full
}

void dropChain()
{
    if (g_chain.refSlot >= 0)
        release(uint32_t(g_chain.refSlot));
    g_chain.refSlot = -1;
    g_chain.ref = nullptr;
}

// Milliseconds from `a` to `b`, negative where `b` came first (the anchor is recorded after the first
// pair it resolves).
bool elapsedMs(CUevent a, CUevent b, double* ms)
{
    float x = 0;
    if (cuEventElapsedTime(&x, a, b) == CUDA_SUCCESS) {
        *ms = x;
        return true;
    }
    if (cuEventElapsedTime(&x, b, a) == CUDA_SUCCESS) {
        *ms = -double(x);
        return true;
    }
    return false;
}

// An anchor in `ctx`: an event on a stream of our own whose completion the host brackets with
// cuptiGetTimestamp (the narrowest bracket of three tries); it becomes the chain's reference.
bool anchor(CUcontext ctx)
{
    if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
        return false;
    if (g_chain.ctx != ctx) {
        dropChain();
        g_chain = Chain();
        if (cuStreamCreate(&g_chain.anchorStream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
            return false;
        for (CUevent& e : g_chain.anchors)
            if (cuEventCreate(&e, CU_EVENT_DEFAULT) != CUDA_SUCCESS)
                return false;
        g_chain.ctx = ctx;
    }
    int64_t best = INT64_MAX, bestNs = 0;
    CUevent chosen = nullptr;
    for (CUevent e : g_chain.anchors) {
        uint64_t t0 = 0, t1 = 0;
        cuptiGetTimestamp(&t0);
        if (cuEventRecord(e, g_chain.anchorStream) != CUDA_SUCCESS || cuEventSynchronize(e) != CUDA_SUCCESS)
            return false;
        cuptiGetTimestamp(&t1);
        if (int64_t(t1 - t0) < best) {
            best = int64_t(t1 - t0);
            bestNs = int64_t(t0) + best / 2;
            chosen = e;
        }
    }
    dropChain(); // the anchor is the reference now
    g_chain.ref = chosen;
    g_chain.refNs = bestNs;
    return chosen != nullptr;
}

} // namespace

bool allowed()
{
    const char* v = std::getenv("GAPSCOPE_LIGHT_EVENTS");
    return !v || std::strcmp(v, "0") != 0;
}

void start()
{
    if (!g_free) {
        g_free = std::make_unique<BoundedQueue<uint32_t>>(kSlots);
        g_done = std::make_unique<BoundedQueue<uint32_t>>(kSlots);
        for (uint32_t i = 0; i < kSlots; ++i)
            g_free->tryPush(i);
    }
    // What the last recording left unresolved goes back (re-recording a pending event is allowed).
    uint32_t i = 0;
    while (g_done->tryPop(i))
        release(i);
    for (uint32_t w : g_waiting)
        release(w);
    g_waiting.clear();
    dropChain();
    g_timed = g_noSlot = g_capturing = g_failed = 0;
    g_running.store(true, std::memory_order_release);
}

void stop()
{
    g_running.store(false, std::memory_order_release);
}

void begin(void* context, const void* params, bool perThread, uint32_t correlation)
{
    t_slot = -1;
    if (!g_running.load(std::memory_order_acquire) || !params || !context)
        return;
    struct Launch { // cudaGraphLaunch(_ptsz), cuGraphLaunch(_ptsz): {exec, stream}
        void* exec;
        CUstream stream;
    };
    const auto* p = static_cast<const Launch*>(params);
    CUstream stream = p->stream;
    if (perThread && !stream)
        stream = CU_STREAM_PER_THREAD;
    CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
    if (cuStreamIsCapturing(stream, &capture) != CUDA_SUCCESS) {
        g_failed.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    if (capture != CU_STREAM_CAPTURE_STATUS_NONE) {
        g_capturing.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    uint32_t i = 0;
    if (!g_free->tryPop(i)) {
        g_noSlot.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    Slot& s = g_slots[i];
    auto* ctx = static_cast<CUcontext>(context);
    if (s.start && s.ctx != ctx) { // made in another context: not usable on this stream
        cuEventDestroy(s.start);
        cuEventDestroy(s.end);
        s.start = s.end = nullptr;
    }
    if (!s.start) {
        if (cuEventCreate(&s.start, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
            s.start = nullptr;
        } else if (cuEventCreate(&s.end, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
            cuEventDestroy(s.start);
            s.start = s.end = nullptr;
        }
        s.ctx = ctx;
    }
    if (!s.start || cuEventRecord(s.start, stream) != CUDA_SUCCESS) {
        g_failed.fetch_add(1, std::memory_order_relaxed);
        release(i);
        return;
    }
    s.stream = stream;
    s.correlation = correlation;
    s.streamId = s.contextId = s.deviceId = s.graphId = 0;
    cuptiGetStreamIdEx(ctx, p->stream, perThread ? 1 : 0, &s.streamId);
    cuptiGetContextId(ctx, &s.contextId);
    cuptiGetDeviceId(ctx, &s.deviceId);
    cuptiGetGraphExecId(static_cast<CUgraphExec>(p->exec), &s.graphId);
    t_slot = int32_t(i);
}

void end(bool launched)
{
    if (t_slot < 0)
        return;
    const auto i = uint32_t(t_slot);
    t_slot = -1;
    Slot& s = g_slots[i];
    if (!launched || cuEventRecord(s.end, s.stream) != CUDA_SUCCESS) {
        if (launched)
            g_failed.fetch_add(1, std::memory_order_relaxed);
        release(i);
        return;
    }
    g_done->tryPush(i); // capacity >= kSlots: never full
}

void take(std::vector<GpuRecord>& out)
{
    if (!g_done)
        return;
    uint32_t i = 0;
    while (g_done->tryPop(i))
        g_waiting.push_back(i);
    while (!g_waiting.empty()) {
        i = g_waiting.front();
        Slot& s = g_slots[i];
        if (g_chain.ctx != s.ctx)
            cuCtxSetCurrent(s.ctx);
        const CUresult q = cuEventQuery(s.end);
        if (q == CUDA_ERROR_NOT_READY)
            break; // in launch order on each thread: the later ones wait too
        g_waiting.pop_front();
        double toStart = 0, length = 0;
        const bool ok = q == CUDA_SUCCESS && ((g_chain.ref && g_chain.ctx == s.ctx) || anchor(s.ctx))
            && elapsedMs(g_chain.ref, s.start, &toStart) && elapsedMs(s.start, s.end, &length) && length >= 0;
        if (!ok) {
            g_failed.fetch_add(1, std::memory_order_relaxed);
            release(i);
            continue;
        }
        const int64_t start = g_chain.refNs + std::llround(toStart * 1e6);
        const GpuRecord g = wholeReplayRecord(
            start, start + std::llround(length * 1e6), s.correlation, s.deviceId, s.contextId, s.streamId, s.graphId);
        out.push_back(g);
        g_timed.fetch_add(1, std::memory_order_relaxed);
        // This pair's end is the next reference: elapsed times stay short (float ms keeps ~0.1 ns).
        if (g_chain.refSlot >= 0)
            release(uint32_t(g_chain.refSlot));
        g_chain.ref = s.end;
        g_chain.refNs = g.end;
        g_chain.refSlot = int32_t(i);
    }
}

Counts counts()
{
    Counts c;
    c.timed = g_timed.load(std::memory_order_relaxed);
    c.noSlot = g_noSlot.load(std::memory_order_relaxed);
    c.capturing = g_capturing.load(std::memory_order_relaxed);
    c.failed = g_failed.load(std::memory_order_relaxed);
    return c;
}

} // namespace gapscope::capture::inject::replaytimer
