// SPDX-License-Identifier: MIT
#include "capture/inject/cuptitracer.h"

#include "capture/inject/graphnodes.h"
#include "capture/inject/injectlog.h"
#include "capture/inject/nvtxhooks.h"
#include "capture/inject/replaytimer.h"
#include "model/format/graphbuild.h"
#include "model/format/wholegraph.h"

#include <cuda.h>
#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
#include <thread>
#include <utility>

namespace gapscope::capture::inject {

namespace {

// The tracer whose rule the callback serves (one per process).
std::atomic<StepRule> g_rule { StepRule::Graph };
// Depth of runtime launch calls on this thread: the driver call made inside one is not a new step.
thread_local int t_inRuntimeLaunch = 0;

// Detaching CUPTI (cuptiFinalize) after a capture. CUPTI recommends calling it from the exit site of a
// CUDA API callback, where no other CUPTI call of that thread is in flight: endDetection() switches
// on the callbacks of every runtime and driver API and marks the detach pending; the first API call
// that returns finalizes CUPTI. An arm before that cancels it (the subscriber is still valid then).
enum class Detach : int { None, Pending, Finalizing, Done, Failed };
std::atomic<Detach> g_detach { Detach::None };
std::atomic<CUpti_SubscriberHandle> g_detachSubscriber { nullptr };
// The earliest steady-clock time (ns) of the finalize: GAPSCOPE_CUPTI_DETACH_DELAY_MS after the capture
// (default 0), so that a CUDA-graph process replays its graphs with every activity kind off before
// CUPTI goes (tests/gpu/lasting.sh graphdetach probes whether that keeps later replays alive).
std::atomic<int64_t> g_detachNotBeforeNs { 0 };
// Steady-clock time (ns) of the newest graph node or exec the watch saw built (0: none yet).
std::atomic<int64_t> g_lastGraphBuiltNs { 0 };

int64_t steadyNowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

int64_t detachDelayNs()
{
    const char* v = std::getenv("GAPSCOPE_CUPTI_DETACH_DELAY_MS");
    if (!v || !*v)
        return 0;
    char* end = nullptr;
    const long ms = std::strtol(v, &end, 10);
    return end && *end == '\0' && ms > 0 && ms <= 600000 ? int64_t(ms) * 1000000 : 0;
}

const uint32_t kRuntimeGraph[]
    = { CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000 };
const uint32_t kDriverGraph[] = { CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz };
const uint32_t kRuntimeLaunch[]
    = { CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
          CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
          CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
          CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
          CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000 };
const uint32_t kDriverLaunch[] = { CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz };

// The light mode (CaptureSettings.detail_every = N > 1): CONCURRENT_KERNEL on for one block of
// kDetailBlock graph launches in every N blocks only; the other replays are recorded whole, by CUDA
// events (replaytimer.h; GAPSCOPE_LIGHT_EVENTS=0 turns them off) or by CUPTI's graph-level trace (GRAPH_TRACE: one
// record per replay, GAPSCOPE_GRAPH_TRACE=1). Switching CONCURRENT_KERNEL is expensive in a graph
// process (on and off around every 10th launch cost +51.6 % on the H100, BENCHMARKS.md), hence blocks.
// The switch happens in the entry callback of the graph launch, before the driver sees the launch, so
// each launch is recorded one way or the other. Where CUPTI refuses the two kinds together
// (NOT_COMPATIBLE) GRAPH_TRACE goes off while CONCURRENT_KERNEL is on.
constexpr uint64_t kDetailBlock = 32;
std::atomic<bool> g_lightEvents { false }; // the light mode times whole replays with events
std::atomic<uint32_t> g_detailEvery { 0 }; // 0: light mode off
std::mutex g_detailMutex; // serialises the switch between launching threads
uint64_t g_detailLaunches = 0; // graph launches seen while recording (under g_detailMutex)
bool g_detailKernelsOn = false; // CONCURRENT_KERNEL enabled now (under g_detailMutex)
bool g_detailGraphTraceOn = false; // GRAPH_TRACE enabled now (under g_detailMutex)
std::atomic<uint64_t> g_detailSwitchErrors { 0 };
// Switching CONCURRENT_KERNEL off gave the kernels of the block's last detailed replay end times some
// 9-10 ms after their start (H100, driver 580, CUPTI 13.0: the last launch of every block and no other,
// 1,617 of 93,330 kernels of one 8-s capture), also where the stream had run that replay to its end
// before the switch (4 of 160 detailed launches, 413 kernels). So the block's last detailed launch is
// timed whole by events as well, and its kernel records are left out (replacedByTimedReplay);
// GAPSCOPE_LIGHT_REPLACE_LAST=0 keeps them. The correlation ids of such launches, the last
// kReplacedRing of them (records come within a flush interval; one block is 32 launches).
constexpr size_t kReplacedRing = 64;
std::atomic<uint32_t> g_replaced[kReplacedRing] = {};
std::atomic<uint64_t> g_replacedCount { 0 };

bool replaceLast()
{
    static const bool on = [] {
        const char* v = std::getenv("GAPSCOPE_LIGHT_REPLACE_LAST");
        return !v || std::strcmp(v, "0") != 0;
    }();
    return on;
}

// Whether the light mode may switch GRAPH_TRACE on: only where the traced process opted in
// (GAPSCOPE_GRAPH_TRACE=1), because on the H100 box (driver 580, CUPTI 13.0) switching it on while the
// process replayed CUDA graphs built before segfaulted the process, 4 of 4 (tests/gpu/lasting.sh light).
bool graphTraceAllowed()
{
    const char* v = std::getenv("GAPSCOPE_GRAPH_TRACE");
    return v && std::strcmp(v, "1") == 0;
}

// The light mode's switch for the graph launch about to happen (`correlation`: its id); whether its
// kernels are recorded. `timeWhole`: it is timed whole by events as well.
bool switchDetail(uint32_t correlation, bool* timeWhole)
{
    *timeWhole = false;
    const uint32_t every = g_detailEvery.load(std::memory_order_acquire);
    if (every < 2)
        return false;
    std::lock_guard<std::mutex> lock(g_detailMutex);
    if (g_detailEvery.load(std::memory_order_relaxed) < 2)
        return false; // recording stopped meanwhile
    const bool detailed = every != format::kDetailNone && (g_detailLaunches++ / kDetailBlock) % every == 0;
    if (detailed && g_detailLaunches % kDetailBlock == 0 && replaceLast()
        && g_lightEvents.load(std::memory_order_relaxed)) { // the block's last: see kReplacedRing
        const uint64_t n = g_replacedCount.fetch_add(1, std::memory_order_relaxed);
        g_replaced[n % kReplacedRing].store(correlation, std::memory_order_release);
        *timeWhole = true;
    }
    if (detailed == g_detailKernelsOn)
        return detailed;
    if (detailed) {
        CUptiResult r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        if (r == CUPTI_ERROR_NOT_COMPATIBLE && g_detailGraphTraceOn) {
            cuptiActivityDisable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
            g_detailGraphTraceOn = false;
            r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        }
        g_detailKernelsOn = r == CUPTI_SUCCESS;
        if (r != CUPTI_SUCCESS)
            g_detailSwitchErrors.fetch_add(1, std::memory_order_relaxed);
    } else {
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        g_detailKernelsOn = false;
        if (!g_detailGraphTraceOn && !g_lightEvents.load(std::memory_order_relaxed)) {
            g_detailGraphTraceOn = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE) == CUPTI_SUCCESS;
            if (!g_detailGraphTraceOn)
                g_detailSwitchErrors.fetch_add(1, std::memory_order_relaxed);
        }
    }
    return g_detailKernelsOn;
}

template <size_t N> bool contains(const uint32_t (&list)[N], uint32_t cbid)
{
    return std::find(std::begin(list), std::end(list), cbid) != std::end(list);
}

// The resource callbacks of the graph-node watch (graphnodes.h).
const uint32_t kGraphResources[] = { CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED,
    CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED };

// The graph-building calls the watch follows (API callbacks of these ids only: they run when graphs are
// built, never per replay or launch), found by name in this CUPTI's tables: explicit construction
// (cudaGraphAdd*Node, cuGraphAdd*Node), copies (instantiate, clone, exec update) and stream capture's
// begin and end. A node built inside one of the first names it; a node built while a stream capture is
// open in the process (inside a launch, copy or event call, whose callbacks stay off) is "stream capture".
enum class BuildCall : uint8_t { None, Build, BeginCapture, EndCapture };
struct BuildCalls {
    std::vector<BuildCall> runtime, driver;
    BuildCall of(CUpti_CallbackDomain domain, uint32_t cbid) const
    {
        const std::vector<BuildCall>& v = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? runtime : driver;
        return cbid < v.size() ? v[cbid] : BuildCall::None;
    }
};

BuildCall buildCallOf(const char* name)
{
    static const std::pair<std::string_view, BuildCall> kPrefixes[]
        = { { "cudaStreamBeginCapture", BuildCall::BeginCapture }, { "cuStreamBeginCapture", BuildCall::BeginCapture },
              { "cudaStreamEndCapture", BuildCall::EndCapture }, { "cuStreamEndCapture", BuildCall::EndCapture },
              { "cudaGraphAdd", BuildCall::Build }, { "cuGraphAdd", BuildCall::Build },
              { "cudaGraphInstantiate", BuildCall::Build }, { "cuGraphInstantiate", BuildCall::Build },
              { "cudaGraphClone", BuildCall::Build }, { "cuGraphClone", BuildCall::Build },
              { "cudaGraphExecUpdate", BuildCall::Build }, { "cuGraphExecUpdate", BuildCall::Build } };
    const std::string_view n = name ? name : "";
    for (const auto& [prefix, call] : kPrefixes)
        if (n.substr(0, prefix.size()) == prefix)
            return call;
    return BuildCall::None;
}

const BuildCalls& buildCalls()
{
    static const BuildCalls calls = [] {
        BuildCalls c;
        c.runtime.assign(CUPTI_RUNTIME_TRACE_CBID_SIZE, BuildCall::None);
        c.driver.assign(CUPTI_DRIVER_TRACE_CBID_SIZE, BuildCall::None);
        for (uint32_t id = 1; id < c.runtime.size(); ++id) {
            const char* name = nullptr;
            if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, id, &name) == CUPTI_SUCCESS)
                c.runtime[id] = buildCallOf(name);
        }
        for (uint32_t id = 1; id < c.driver.size(); ++id) {
            const char* name = nullptr;
            if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, id, &name) == CUPTI_SUCCESS)
                c.driver[id] = buildCallOf(name);
        }
        return c;
    }();
    return calls;
}

// The outermost graph-building call of this thread (a runtime call's driver half nests inside it), known
// by its domain and correlation id, and the stream captures open in the process (begun and not ended; a
// capture may end on another thread). A call of the same domain replaces it, so an exit that was never
// seen (callbacks switched off inside the call) does not leave it for good.
thread_local const char* t_buildCall = nullptr;
thread_local CUpti_CallbackDomain t_buildDomain = CUPTI_CB_DOMAIN_INVALID;
thread_local uint32_t t_buildCorrelation = 0;
std::atomic<int> g_openCaptures { 0 };

void onBuildCall(CUpti_CallbackDomain domain, BuildCall call, const CUpti_CallbackData* cb) noexcept
{
    if (cb->callbackSite == CUPTI_API_ENTER) {
        if (!t_buildCall || domain == t_buildDomain) {
            t_buildCall = cb->functionName; // a global constant (cupti_callbacks.h)
            t_buildDomain = domain;
            t_buildCorrelation = cb->correlationId;
        }
        return;
    }
    if (!t_buildCall || domain != t_buildDomain || cb->correlationId != t_buildCorrelation)
        return; // the driver half of a runtime call, or a call entered before the watch
    t_buildCall = nullptr;
    // Runtime and driver return values are both 0 on success.
    const bool ok = !cb->functionReturnValue || *static_cast<const int*>(cb->functionReturnValue) == 0;
    if (call == BuildCall::BeginCapture && ok)
        g_openCaptures.fetch_add(1, std::memory_order_relaxed);
    if (call == BuildCall::EndCapture && g_openCaptures.load(std::memory_order_relaxed) > 0)
        g_openCaptures.fetch_sub(1, std::memory_order_relaxed);
}

// The call a node being built now comes from (nullptr: not known).
const char* currentBuildCall()
{
    if (t_buildCall)
        return t_buildCall;
    return g_openCaptures.load(std::memory_order_relaxed) > 0 ? format::kStreamCaptureCall : nullptr;
}

// A graph node or exec was built, on the building thread (inside its capture or cudaGraph* call).
void onGraphResource(CUpti_CallbackId cbid, const CUpti_ResourceData* rd) noexcept
{
    const auto* gd = rd ? static_cast<const CUpti_GraphData*>(rd->resourceDescriptor) : nullptr;
    if (!gd)
        return;
    g_lastGraphBuiltNs.store(steadyNowNs(), std::memory_order_relaxed);
    try {
        GraphNodeRegistry& reg = GraphNodeRegistry::instance();
        uint64_t node = 0, original = 0;
        uint32_t graph = 0, exec = 0;
        if (gd->graph)
            cuptiGetGraphId(gd->graph, &graph);
        switch (cbid) {
        case CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED:
            if (gd->node && cuptiGetGraphNodeId(gd->node, &node) == CUPTI_SUCCESS)
                reg.recordCreated(node, graph, currentTid(), nvtxStackOfThisThread(), currentBuildCall(),
                    uint8_t(std::min<uint32_t>(uint32_t(gd->nodeType) + 1, 255)));
            break;
        case CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED:
            if (gd->node && gd->originalNode && cuptiGetGraphNodeId(gd->node, &node) == CUPTI_SUCCESS
                && cuptiGetGraphNodeId(gd->originalNode, &original) == CUPTI_SUCCESS)
                reg.recordCloned(node, original, graph, currentBuildCall(),
                    uint8_t(std::min<uint32_t>(uint32_t(gd->nodeType) + 1, 255)));
            break;
        case CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED:
            if (gd->graphExec && cuptiGetGraphExecId(gd->graphExec, &exec) == CUPTI_SUCCESS)
                reg.recordExec(exec, graph);
            break;
        default:
            break;
        }
    } catch (...) {
        // out of memory: this node's context is lost, the process is not
    }
}

void CUPTIAPI onCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data)
{
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
        onGraphResource(cbid, static_cast<const CUpti_ResourceData*>(data));
        return;
    }
    if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API)
        return;
    const auto* cb = static_cast<const CUpti_CallbackData*>(data);
    const BuildCall build = buildCalls().of(domain, cbid);
    if (build != BuildCall::None)
        onBuildCall(domain, build, cb); // before a detach's finalize, so that its exit is seen
    if (g_detach.load(std::memory_order_acquire) == Detach::Pending) {
        Detach expected = Detach::Pending;
        if (cb->callbackSite == CUPTI_API_EXIT && steadyNowNs() >= g_detachNotBeforeNs.load(std::memory_order_relaxed)
            && g_detach.compare_exchange_strong(expected, Detach::Finalizing, std::memory_order_acq_rel)) {
            if (cuptiFinalize() == CUPTI_SUCCESS) {
                g_detach.store(Detach::Done, std::memory_order_release);
                injectLog("CUPTI detached (cuptiFinalize)");
            } else { // still attached: at least no callback stays on
                auto* sub = g_detachSubscriber.load(std::memory_order_acquire);
                cuptiEnableDomain(0, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
                cuptiEnableDomain(0, sub, CUPTI_CB_DOMAIN_DRIVER_API);
                g_detach.store(Detach::Failed, std::memory_order_release);
            }
        }
        return;
    }
    if (build != BuildCall::None)
        return; // no launch: neither a step marker nor the light mode's switch
    const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
    const bool graph = runtime ? contains(kRuntimeGraph, cbid) : contains(kDriverGraph, cbid);
    if (cb->callbackSite == CUPTI_API_EXIT) {
        if (runtime && t_inRuntimeLaunch > 0)
            --t_inRuntimeLaunch;
        else if (t_inRuntimeLaunch > 0)
            return; // the driver half of a runtime launch
        if (graph && g_lightEvents.load(std::memory_order_relaxed))
            replaytimer::end(!cb->functionReturnValue || *static_cast<const int*>(cb->functionReturnValue) == 0);
        return;
    }
    if (runtime)
        ++t_inRuntimeLaunch;
    else if (t_inRuntimeLaunch > 0)
        return; // the driver half of a runtime launch already seen
    const StepRule rule = g_rule.load(std::memory_order_relaxed);
    if (graph) {
        bool timeWhole = false;
        const bool detailed = switchDetail(cb->correlationId, &timeWhole);
        if (g_lightEvents.load(std::memory_order_relaxed) && (!detailed || timeWhole))
            replaytimer::begin(cb->context, cb->functionParams,
                cbid
                    == (runtime ? CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000
                                : CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz),
                cb->correlationId);
    }
    if ((rule == StepRule::Graph) != graph)
        return;
    StepMarker m;
    m.time = nowRealtimeNs();
    m.correlation = cb->correlationId;
    m.tid = currentTid();
    m.source = graph ? MarkerSource::GraphLaunch : MarkerSource::AnchorLaunch;
    m.symbol = graph ? nullptr : cb->symbolName;
    channels().pushMarker(m);
}

void CUPTIAPI onBufferRequested(uint8_t** buffer, size_t* size, size_t* maxRecords)
{
    *maxRecords = 0;
    BufferPool* pool = channels().pool.load(std::memory_order_acquire);
    if (!pool) {
        *buffer = nullptr;
        *size = 0;
        return;
    }
    pool->acquire(buffer, size);
}

void CUPTIAPI onBufferCompleted(CUcontext ctx, uint32_t streamId, uint8_t* buffer, size_t, size_t validSize)
{
    Channels& ch = channels();
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, streamId, &dropped) == CUPTI_SUCCESS && dropped)
        ch.cuptiDropped.fetch_add(dropped, std::memory_order_relaxed);
    if (BufferPool* pool = ch.pool.load(std::memory_order_acquire); pool && buffer)
        pool->complete(buffer, validSize);
}

std::string cuptiError(CUptiResult r)
{
    const char* text = nullptr;
    cuptiGetResultString(r, &text);
    return text ? text : ("CUPTI error " + std::to_string(int(r)));
}

// API records of the listed calls only. The activity kind goes on first, then every callback id
// off, then the listed ones on (the kind, switched on later, would reset the per-id settings).
// Per-id enabling without the kind, which the CUPTI header allows, recorded no API activity at all
// on the H200 box (CUPTI 13.0, driver 580): traces had kernels and syncs but no launches.
Status enableApis()
{
    CUptiResult r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
    if (r != CUPTI_SUCCESS)
        return Status::error("cuptiActivityEnable(RUNTIME): " + cuptiError(r));
    r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER);
    if (r != CUPTI_SUCCESS)
        return Status::error("cuptiActivityEnable(DRIVER): " + cuptiError(r));
    // Ids this CUPTI does not know answer INVALID_PARAMETER: nothing to switch off there.
    for (uint32_t id = 1; id < CUPTI_RUNTIME_TRACE_CBID_SIZE; ++id)
        cuptiActivityEnableRuntimeApi(id, 0);
    for (uint32_t id = 1; id < CUPTI_DRIVER_TRACE_CBID_SIZE; ++id)
        cuptiActivityEnableDriverApi(id, 0);
    for (uint32_t cbid : CuptiTracer::runtimeApis())
        if ((r = cuptiActivityEnableRuntimeApi(cbid, 1)) != CUPTI_SUCCESS)
            injectLog("cuptiActivityEnableRuntimeApi(%u): %s", cbid, cuptiError(r).c_str());
    for (uint32_t cbid : CuptiTracer::driverApis())
        if ((r = cuptiActivityEnableDriverApi(cbid, 1)) != CUPTI_SUCCESS)
            injectLog("cuptiActivityEnableDriverApi(%u): %s", cbid, cuptiError(r).c_str());
    return Status::ok();
}

void disableApis()
{
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
}

} // namespace

const std::vector<uint32_t>& CuptiTracer::runtimeApis()
{
    static const std::vector<uint32_t> list = [] {
        std::vector<uint32_t> v(std::begin(kRuntimeLaunch), std::end(kRuntimeLaunch));
        v.insert(v.end(), std::begin(kRuntimeGraph), std::end(kRuntimeGraph));
        for (uint32_t id :
            { CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
                CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000,
                CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_v3020, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000,
                CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
                CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000,
                CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
                CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
                CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000,
                CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
                CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_ptsz_v7000 })
            v.push_back(id);
        return v;
    }();
    return list;
}

const std::vector<uint32_t>& CuptiTracer::driverApis()
{
    static const std::vector<uint32_t> list = [] {
        std::vector<uint32_t> v(std::begin(kDriverLaunch), std::end(kDriverLaunch));
        v.insert(v.end(), std::begin(kDriverGraph), std::end(kDriverGraph));
        for (uint32_t id : { CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
                 CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz, CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize,
                 CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2,
                 CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2 })
            v.push_back(id);
        return v;
    }();
    return list;
}

CuptiTracer::CuptiTracer(Channels&)
{
    if (cuptiGetVersion(&m_version) != CUPTI_SUCCESS)
        m_version = 0;
    m_layout = layoutForCuptiVersion(m_version);
}

CuptiTracer::~CuptiTracer()
{
    stopRecording();
    if (m_detachRequested) {
        settleDetach();
        m_detachRequested = false;
    }
    m_everRecorded = false; // at exit: release the subscriber, no detach
    endDetection();
    if (m_subscriber && !m_detachRequested) { // the graph-node watch
        enableResourceCallbacks(false);
        cuptiUnsubscribe(static_cast<CUpti_SubscriberHandle>(m_subscriber));
        m_subscriber = nullptr;
    }
}

CuptiTracer::WatchLevel CuptiTracer::watchLevel()
{
    const char* v = std::getenv("GAPSCOPE_GRAPH_NODES");
    if (!v)
        return WatchLevel::Full;
    return std::strcmp(v, "0") == 0        ? WatchLevel::Off
        : std::strcmp(v, "subscribe") == 0 ? WatchLevel::Subscribe
        : std::strcmp(v, "resources") == 0 ? WatchLevel::Resources
                                           : WatchLevel::Full;
}

void CuptiTracer::enableResourceCallbacks(bool on)
{
    auto* sub = static_cast<CUpti_SubscriberHandle>(m_subscriber);
    if (!sub)
        return;
    bool ok = true;
    const WatchLevel level = watchLevel();
    if (level >= WatchLevel::Resources)
        for (uint32_t id : kGraphResources)
            ok = cuptiEnableCallback(on ? 1 : 0, sub, CUPTI_CB_DOMAIN_RESOURCE, id) == CUPTI_SUCCESS && ok;
    // The graph-building calls (their names for the nodes); a failure here loses only the names.
    const BuildCalls& calls = buildCalls();
    for (uint32_t id = 1; level == WatchLevel::Full && id < calls.runtime.size(); ++id)
        if (calls.runtime[id] != BuildCall::None)
            cuptiEnableCallback(on ? 1 : 0, sub, CUPTI_CB_DOMAIN_RUNTIME_API, id);
    for (uint32_t id = 1; level == WatchLevel::Full && id < calls.driver.size(); ++id)
        if (calls.driver[id] != BuildCall::None)
            cuptiEnableCallback(on ? 1 : 0, sub, CUPTI_CB_DOMAIN_DRIVER_API, id);
    m_watching = on && ok;
    setNvtxStackKept(m_watching && level >= WatchLevel::Resources);
}

// Takes the process's one CUPTI subscriber (m_subscriber); `otherClient` names who holds it when CUPTI refuses.
Status CuptiTracer::subscribe(std::string* otherClient)
{
    char oldName[128] = {};
    CUpti_SubscriberParams params {};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "gapscope";
    params.oldSubscriberName = oldName;
    params.oldSubscriberSize = sizeof(oldName);
    CUpti_SubscriberHandle sub = nullptr;
    const CUptiResult r = cuptiSubscribe_v2(&sub, onCallback, nullptr, &params);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        // Clients that subscribe without a name (torch.profiler's Kineto keeps its subscriber for
        // the life of the process once it has profiled) show up as "<not provided>".
        std::string who = oldName;
        if (who.empty() || who.find("not provided") != std::string::npos)
            who = "an unnamed CUPTI subscriber (torch.profiler/Kineto keeps one once it has profiled in this "
                  "process; Nsight tools too)";
        if (otherClient)
            *otherClient = who;
        return Status::error("CUPTI is in use by " + who);
    }
    if (r != CUPTI_SUCCESS)
        return Status::error("cuptiSubscribe failed: " + cuptiError(r));
    m_subscriber = sub;
    return Status::ok();
}

void CuptiTracer::watchGraphNodes()
{
    if (watchLevel() == WatchLevel::Off || m_watching || m_detachRequested || m_watchReleased)
        return;
    if (!m_subscriber) {
        std::string other;
        if (Status s = subscribe(&other); !s) {
            if (!m_watchRefused)
                injectLog("graph nodes not watched: %s", s.message().c_str());
            m_watchRefused = true;
            return;
        }
    }
    enableResourceCallbacks(true);
    if (m_watching) {
        m_watchSinceNs = steadyNowNs();
        injectLog("watching CUDA-graph building (node contexts; GAPSCOPE_GRAPH_NODES=0 turns it off)");
    }
}

// GAPSCOPE_GRAPH_NODES_RELEASE_S (default 60; 0: never): how long the watch waits, after the newest
// graph node it saw built, before it lets CUPTI go.
int64_t CuptiTracer::watchReleaseNs()
{
    static const int64_t ns = [] { // read once: maintain() asks on every tick
        const char* v = std::getenv("GAPSCOPE_GRAPH_NODES_RELEASE_S");
        if (!v || !*v)
            return int64_t(60) * 1000000000;
        char* end = nullptr;
        const double s = std::strtod(v, &end);
        return end && *end == '\0' && s > 0 && s < 1e6 ? int64_t(s * 1e9) : int64_t(0);
    }();
    return ns;
}

// The watch's subscriber costs every replay a little (GAPSCOPE_GRAPH_NODES=subscribe measures it), so
// once the process has built graphs and built none for watchReleaseNs() of this watch, and no capture
// switched an activity kind on since CUPTI was attached, the watch detaches CUPTI (the same cuptiFinalize at an API
// exit as after a capture) and is not taken up again: graphs built later carry no capture-time context (their layers
// are inferred).
void CuptiTracer::maybeReleaseWatch()
{
    if (!m_watching || m_detecting || m_recording || m_everRecorded || m_detachRequested)
        return;
    const int64_t after = watchReleaseNs();
    const int64_t built = g_lastGraphBuiltNs.load(std::memory_order_relaxed);
    if (after <= 0 || built == 0)
        return; // no graph built yet: they may still come (model loading)
    if (g_openCaptures.load(std::memory_order_relaxed) > 0)
        return; // a stream capture is open: a graph is being built
    if (steadyNowNs() - std::max(built, m_watchSinceNs) < after)
        return;
    if (requestDetach(0)) {
        m_watchReleased = true;
        injectLog("graph-node watch released: no CUDA graph built for %.0f s; CUPTI detaches at the next API "
                  "exit (GAPSCOPE_GRAPH_NODES_RELEASE_S)",
            double(after) / 1e9);
    }
}

void CuptiTracer::maintain()
{
    if (m_detachRequested && !m_detecting) {
        const Detach d = g_detach.load(std::memory_order_acquire);
        if (d != Detach::Done && d != Detach::Failed)
            return; // pending: the next API exit finalizes
        settleDetach();
        m_detachRequested = false;
    }
    if (!m_watching && !m_detecting)
        watchGraphNodes();
    maybeReleaseWatch();
}

void CuptiTracer::enableGraphCallbacks(bool on)
{
    auto* sub = static_cast<CUpti_SubscriberHandle>(m_subscriber);
    if (!sub)
        return;
    const uint32_t flag = on ? 1 : 0;
    for (uint32_t id : kRuntimeGraph)
        cuptiEnableCallback(flag, sub, CUPTI_CB_DOMAIN_RUNTIME_API, id);
    for (uint32_t id : kDriverGraph)
        cuptiEnableCallback(flag, sub, CUPTI_CB_DOMAIN_DRIVER_API, id);
}

void CuptiTracer::enableCallbacks(bool on)
{
    auto* sub = static_cast<CUpti_SubscriberHandle>(m_subscriber);
    if (!sub)
        return;
    const uint32_t flag = on ? 1 : 0;
    if (m_rule == StepRule::Graph) {
        enableGraphCallbacks(on);
    } else if (m_rule == StepRule::Anchor) {
        for (uint32_t id : kRuntimeLaunch)
            cuptiEnableCallback(flag, sub, CUPTI_CB_DOMAIN_RUNTIME_API, id);
        for (uint32_t id : kDriverLaunch)
            cuptiEnableCallback(flag, sub, CUPTI_CB_DOMAIN_DRIVER_API, id);
    }
}

// Whether endDetection() detaches CUPTI: GAPSCOPE_CUPTI_DETACH=0 keeps it attached (to measure what
// an attached CUPTI costs); by default it detaches where the driver is CUDA 12.6 or newer (older
// drivers crashed on re-attaching while CUDA graphs exist, the reason torch.profiler left teardown off)
// and no kernel of a CUDA-graph replay was recorded; GAPSCOPE_CUPTI_DETACH=force detaches even then.
// Read once: neither the variable nor the driver changes in a process's life.
CuptiTracer::DetachPolicy CuptiTracer::detachPolicy()
{
    static const DetachPolicy policy = [] {
        const char* v = std::getenv("GAPSCOPE_CUPTI_DETACH");
        if (v && *v)
            return std::strcmp(v, "0") == 0    ? DetachPolicy::NeverAsked
                : std::strcmp(v, "force") == 0 ? DetachPolicy::Always
                                               : DetachPolicy::UnlessGraphKernels;
        int driver = 0;
        return cuDriverGetVersion(&driver) == CUDA_SUCCESS && driver >= 12060 ? DetachPolicy::UnlessGraphKernels
                                                                              : DetachPolicy::NeverOldDriver;
    }();
    return policy;
}

std::string CuptiTracer::staysAttachedWhy() const
{
    if (!m_everRecorded)
        return {};
    switch (detachPolicy()) {
    case DetachPolicy::Always:
        return {};
    case DetachPolicy::NeverAsked:
        return "GAPSCOPE_CUPTI_DETACH=0";
    case DetachPolicy::NeverOldDriver:
        return "the driver is older than CUDA 12.6, where attaching again crashed with CUDA graphs";
    case DetachPolicy::UnlessGraphKernels:
        break;
    }
    if (!channels().graphKernelsRecorded.load(std::memory_order_relaxed))
        return {};
    return "kernels of CUDA-graph replays were recorded, and this CUPTI's cuptiFinalize then faults later replays "
           "of those graphs; captures with --whole-replays record none";
}

// The detach requested by the last endDetection(): cancelled while still pending (the subscriber is
// then still ours), waited for while an API exit is finalizing. Afterwards no subscriber is held.
void CuptiTracer::settleDetach()
{
    Detach expected = Detach::Pending;
    if (g_detach.compare_exchange_strong(expected, Detach::None, std::memory_order_acq_rel)) {
        injectLog("CUPTI detach cancelled: no CUDA API call since the last capture");
        auto* sub = static_cast<CUpti_SubscriberHandle>(m_subscriber);
        cuptiEnableDomain(0, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
        cuptiEnableDomain(0, sub, CUPTI_CB_DOMAIN_DRIVER_API);
        cuptiUnsubscribe(sub);
        m_subscriber = nullptr;
        return;
    }
    for (int i = 0; i < 2000 && g_detach.load(std::memory_order_acquire) == Detach::Finalizing; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    switch (g_detach.load(std::memory_order_acquire)) {
    case Detach::Done:
        ++m_detaches;
        m_everRecorded = false;
        m_subscriber = nullptr;
        injectLog("CUPTI was detached (cuptiFinalize) after the last capture; attaching again");
        break;
    case Detach::Failed: // cuptiFinalize refused: the subscriber is still ours
        injectLog("cuptiFinalize failed: CUPTI stays attached");
        cuptiUnsubscribe(static_cast<CUpti_SubscriberHandle>(m_subscriber));
        m_subscriber = nullptr;
        break;
    default:
        injectLog("CUPTI detach still in progress after 2 s: left to it");
        m_subscriber = nullptr;
        break;
    }
    g_detach.store(Detach::None, std::memory_order_release);
}

Status CuptiTracer::beginDetection(StepRule rule, const std::string&, std::string* otherClient)
{
    if (m_detachRequested) {
        settleDetach();
        m_detachRequested = false;
    }
    if (m_detecting)
        return Status::error("step detection already running");
    if (m_subscriber) { // the graph-node watch's subscriber
        m_detecting = true;
        m_rule = rule;
        g_rule.store(rule, std::memory_order_relaxed);
        enableCallbacks(true);
        return Status::ok();
    }
    if (Status s = subscribe(otherClient); !s)
        return s;
    m_detecting = true;
    m_rule = rule;
    g_rule.store(rule, std::memory_order_relaxed);
    enableCallbacks(true);
    return Status::ok();
}

void CuptiTracer::endDetection()
{
    if (!m_subscriber || m_detachRequested || !m_detecting)
        return;
    enableCallbacks(false);
    m_detecting = false;
    auto* sub = static_cast<CUpti_SubscriberHandle>(m_subscriber);
    bool detach = false;
    if (m_everRecorded) {
        const std::string why = staysAttachedWhy();
        detach = why.empty();
        if (!detach)
            injectLog("CUPTI stays attached: %s (see capture/README.md)", why.c_str());
    }
    // Everything the capture switched on is off and flushed (stopRecording); what CUPTI keeps hooked
    // into the driver goes with cuptiFinalize at the next API exit.
    if (detach && requestDetach(detachDelayNs()))
        return;
    if (m_watching)
        return; // the subscriber stays, with the graph-node callbacks only
    cuptiUnsubscribe(sub);
    m_subscriber = nullptr;
}

// Asks for cuptiFinalize at the exit of the next CUDA API call, `delayNs` from now at the earliest;
// false where the API callbacks cannot be switched on (then nothing changed).
bool CuptiTracer::requestDetach(int64_t delayNs)
{
    auto* sub = static_cast<CUpti_SubscriberHandle>(m_subscriber);
    g_detachSubscriber.store(sub, std::memory_order_release);
    g_detachNotBeforeNs.store(delayNs ? steadyNowNs() + delayNs : 0, std::memory_order_relaxed);
    g_detach.store(Detach::Pending, std::memory_order_release);
    const CUptiResult r1 = cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
    const CUptiResult r2 = cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API);
    if (r1 == CUPTI_SUCCESS || r2 == CUPTI_SUCCESS) {
        m_detachRequested = true;
        m_watching = false; // cuptiFinalize takes the watch with it; maintain() takes it up again
        setNvtxStackKept(false);
        injectLog("CUPTI detach requested: at the exit of the next CUDA API call%s",
            delayNs ? " after GAPSCOPE_CUPTI_DETACH_DELAY_MS" : "");
        return true;
    }
    g_detach.store(Detach::None, std::memory_order_release);
    injectLog("CUPTI detach not possible (cuptiEnableDomain: %s): unsubscribing only", cuptiError(r1).c_str());
    return false;
}

CuptiTracer::AttachState CuptiTracer::attachState() const
{
    if (m_detecting)
        return AttachState::Attached;
    if (m_detachRequested) {
        switch (g_detach.load(std::memory_order_acquire)) {
        case Detach::Done:
            return AttachState::Detached;
        case Detach::Pending:
        case Detach::Finalizing:
            return AttachState::DetachPending;
        case Detach::None:
        case Detach::Failed:
            break;
        }
    }
    // m_everRecorded is cleared by a detach: set, the last capture recorded and CUPTI stayed.
    if (m_everRecorded)
        return AttachState::Idle;
    return m_detaches > 0 ? AttachState::Detached : AttachState::Never;
}

Status CuptiTracer::startRecording(const pb::CaptureSettings& s)
{
    if (m_recording)
        return Status::ok();
    if (m_layout == CuptiLayout::Unknown)
        return Status::error("CUPTI API version " + std::to_string(m_version)
            + " has no known record layout (known: " + knownCuptiVersions() + ")");
    const bool all = !s.kernels() && !s.memory_ops() && !s.runtime_api() && !s.synchronization();
    const bool graphTrace = graphTraceAllowed();
    const bool events = !graphTrace && replaytimer::allowed();
    if ((all || s.kernels()) && s.detail_every() > 1 && !graphTrace && !events)
        return Status::error(
            "--detail-every is refused: the traced process set GAPSCOPE_LIGHT_EVENTS=0 (no replays timed by CUDA "
            "events), and CUPTI's graph-level trace, which crashed graph processes inside libcupti (H100, driver "
            "580, CUPTI 13.0; capture/README.md), is used only with GAPSCOPE_GRAPH_TRACE=1");
    CUptiResult r = cuptiActivityRegisterCallbacks(onBufferRequested, onBufferCompleted);
    if (r != CUPTI_SUCCESS)
        return Status::error("cuptiActivityRegisterCallbacks: " + cuptiError(r));
    cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    configureDeviceBuffers();
    std::vector<CUpti_ActivityKind> kinds;
    const bool light = (all || s.kernels()) && s.detail_every() > 1;
    if (light) { // CONCURRENT_KERNEL goes on at the first graph launch (switchDetail)
        std::lock_guard<std::mutex> lock(g_detailMutex);
        g_detailLaunches = 0;
        g_detailKernelsOn = false;
        g_detailGraphTraceOn = !events;
        g_detailSwitchErrors.store(0, std::memory_order_relaxed);
        if (events) {
            g_replacedCount.store(0, std::memory_order_relaxed);
            for (auto& c : g_replaced)
                c.store(0, std::memory_order_relaxed);
            replaytimer::start();
            g_lightEvents.store(true, std::memory_order_release);
        } else {
            kinds.push_back(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
        }
    } else if (all || s.kernels()) {
        kinds.push_back(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    }
    if (all || s.memory_ops()) {
        kinds.push_back(CUPTI_ACTIVITY_KIND_MEMCPY);
        kinds.push_back(CUPTI_ACTIVITY_KIND_MEMSET);
    }
    if (all || s.synchronization())
        kinds.push_back(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    m_kinds.clear();
    m_recording = true; // from here on stopRecording() undoes what was switched on
    m_everRecorded = true;
    for (CUpti_ActivityKind k : kinds) {
        r = cuptiActivityEnable(k);
        if (r != CUPTI_SUCCESS) {
            stopRecording();
            return Status::error("cuptiActivityEnable(" + std::to_string(int(k)) + "): " + cuptiError(r));
        }
        m_kinds.push_back(int(k));
    }
    if (all || s.runtime_api()) {
        if (Status st = enableApis(); !st) {
            stopRecording();
            return st;
        }
    }
    if (light) {
        m_light = true;
        if (m_rule != StepRule::Graph)
            enableGraphCallbacks(true);
        g_detailEvery.store(s.detail_every(), std::memory_order_release);
        const char* how = events ? "CUDA events" : "CUPTI graph-level trace";
        if (s.detail_every() == format::kDetailNone)
            injectLog("light mode: every graph replay whole, no detailed block (%s)", how);
        else
            injectLog("light mode: kernels of one block of %llu graph launches in every %u, whole replays of the "
                      "others (%s)",
                (unsigned long long)kDetailBlock, s.detail_every(), how);
    }
    return Status::ok();
}

// CUPTI keeps kernel, memcpy and memset records of each context in device buffers (about 3.2 MB,
// 100,000 records by default) and takes a new one from its pool as each fills, up to 250 per
// context. On the H200, some 10,000-step captures of CUDA-graph replays grew the process's heap by
// 4.6 MB per 100,000 records all through the capture while gapscope's own caches stayed flat: one
// device buffer's worth each time. The pool is capped at kPoolLimit buffers here, which bounds that
// growth if it is CUPTI's buffer cycling (not established: CUPTI documents the limit as set before
// a context is created, and the context exists by now) and is ample at our flush interval (one
// buffer lasted 1.3 s of a 0.45 ms-step loop). The environment may size both (applies to buffers
// allocated from now on); the values in force are reported.
constexpr uint64_t kPoolLimit = 8;

void CuptiTracer::configureDeviceBuffers()
{
    auto fromEnv = [](const char* name, uint64_t& out) {
        const char* v = std::getenv(name);
        if (!v || !*v)
            return false;
        char* end = nullptr;
        const unsigned long long n = std::strtoull(v, &end, 10);
        if (!end || *end || n == 0) {
            injectLog("%s=%s ignored: expected a positive integer", name, v);
            return false;
        }
        out = n;
        return true;
    };
    const struct {
        const char* env;
        CUpti_ActivityAttribute attr;
        uint64_t* value;
    } knobs[] = { { "GAPSCOPE_CUPTI_DEVICE_BUFFER_BYTES", CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &m_deviceBuffers.bytes },
        { "GAPSCOPE_CUPTI_DEVICE_BUFFER_POOL_LIMIT", CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT,
            &m_deviceBuffers.poolLimit } };
    for (const auto& k : knobs) {
        uint64_t want = 0;
        bool set = fromEnv(k.env, want);
        if (!set && k.attr == CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT) {
            size_t v = 0, size = sizeof(v);
            set = cuptiActivityGetAttribute(k.attr, &size, &v) == CUPTI_SUCCESS && v > kPoolLimit;
            want = kPoolLimit;
        }
        if (set) {
            size_t v = static_cast<size_t>(want), size = sizeof(v);
            const CUptiResult r = cuptiActivitySetAttribute(k.attr, &size, &v);
            if (r != CUPTI_SUCCESS)
                injectLog("cuptiActivitySetAttribute(%d, %llu): %s", int(k.attr), (unsigned long long)want,
                    cuptiError(r).c_str());
        }
        size_t v = 0, size = sizeof(v);
        *k.value = cuptiActivityGetAttribute(k.attr, &size, &v) == CUPTI_SUCCESS ? v : 0;
    }
}

void CuptiTracer::takeTimedReplays(std::vector<GpuRecord>& out)
{
    replaytimer::take(out);
}

bool CuptiTracer::replacedByTimedReplay(uint32_t correlation) const
{
    if (correlation == 0 || g_replacedCount.load(std::memory_order_acquire) == 0)
        return false;
    for (const auto& c : g_replaced)
        if (c.load(std::memory_order_relaxed) == correlation)
            return true;
    return false;
}

void CuptiTracer::flush()
{
    cuptiActivityFlushAll(0);
}

void CuptiTracer::disableRecording()
{
    if (!m_recording || m_disabled)
        return;
    if (m_light) {
        std::lock_guard<std::mutex> lock(g_detailMutex);
        g_detailEvery.store(0, std::memory_order_release);
        if (g_detailKernelsOn)
            cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        if (g_detailGraphTraceOn)
            cuptiActivityDisable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
        g_detailKernelsOn = g_detailGraphTraceOn = false;
        if (const uint64_t errors = g_detailSwitchErrors.load(std::memory_order_relaxed))
            injectLog(
                "light mode: %llu switches between kernel and graph-level records failed", (unsigned long long)errors);
        injectLog("light mode: %llu detailed blocks' last launches timed whole instead (their kernel records "
                  "come out wrong)",
            (unsigned long long)g_replacedCount.load(std::memory_order_relaxed));
        if (g_lightEvents.exchange(false)) {
            replaytimer::stop(); // what is in flight is still resolved by takeTimedReplays
            const replaytimer::Counts c = replaytimer::counts();
            injectLog("light mode: %llu replays timed by events so far; not timed: %llu (no free event pair), %llu "
                      "(stream being captured), %llu (a CUDA call failed)",
                (unsigned long long)c.timed, (unsigned long long)c.noSlot, (unsigned long long)c.capturing,
                (unsigned long long)c.failed);
        }
        if (m_rule != StepRule::Graph)
            enableGraphCallbacks(false);
        m_light = false;
    }
    disableApis();
    for (int k : m_kinds)
        if (k != CUPTI_ACTIVITY_KIND_GRAPH_TRACE) // the light mode's, switched off above
            cuptiActivityDisable(CUpti_ActivityKind(k));
    m_disabled = true;
    cuptiActivityFlushAll(0);
}

void CuptiTracer::stopRecording()
{
    if (!m_recording)
        return;
    disableRecording();
    m_kinds.clear();
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    m_recording = false;
    m_disabled = false;
}

void CuptiTracer::forEachRecord(const uint8_t* buffer, size_t validSize, const std::function<void(const void*)>& fn)
{
    CUpti_Activity* record = nullptr;
    auto* data = const_cast<uint8_t*>(buffer);
    while (cuptiActivityGetNextRecord(data, validSize, &record) == CUPTI_SUCCESS)
        fn(record);
}

std::string CuptiTracer::apiName(uint8_t domain, uint32_t cbid)
{
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name)
            != CUPTI_SUCCESS
        || !name)
        return {};
    std::string s(name);
    // "cudaLaunchKernel_v7000" -> "cudaLaunchKernel"
    const auto v = s.rfind("_v");
    if (v != std::string::npos && v + 2 < s.size() && std::all_of(s.begin() + long(v) + 2, s.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
        }))
        s.erase(v);
    return s;
}

} // namespace gapscope::capture::inject
