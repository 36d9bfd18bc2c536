// What CUPTI's kernel recording leaves in an instantiated CUDA graph, and what takes it back.
//
// One process per variant (a fault is sticky): a graph of NODES short kernels (plus a memset and a
// device copy, as stream capture of a model step gives) is instantiated and replayed with no CUPTI
// ("before"); then CUPTI records CONCURRENT_KERNEL over 100 replays, the kind is switched off and the
// buffers flushed ("attached": the cost CUPTI leaves while it stays attached); then the variant's
// action on the exec ("after action"), then, for *_finalize variants, cuptiFinalize and replays
// ("detached", or the fault). Times are medians over blocks of replays, us per replay, from CUDA events.
//
// Variants: attached (no action), update (cuGraphExecUpdate with the graph it was instantiated from),
// setparams (cuGraphExecKernelNodeSetParams on every kernel node with its own parameters), upload
// (cuGraphUpload), reinstantiate (a new exec from the graph: what a tool cannot do to a server's own
// graphs, the reference); each with a _finalize twin; finalize (no action, then cuptiFinalize);
// finalize_reattach (CUPTI attached again right after the finalize, before the next replay: its activity
// buffer callbacks, no kind on; finalize_resub: a callback-API subscriber only, nothing enabled;
// finalize_rets: only a cuptiGetTimestamp; with _twice, finalized once more after its replays, CUPTI not
// brought back; with _again, the exec recorded a second time, then finalized and brought back the same
// way, as every later capture would); eager_attached and
// eager_finalize (only eager kernels launched while CUPTI records); knobs (every CUPTI switch that
// might take per-launch work back: the kind off per context, latency timestamps, launch attributes,
// event device timestamps). Prefixes: pre_ (CUPTI attached, no kind, before the graph is instantiated, as
// a library loaded at process start), gt_ (GRAPH_TRACE records instead of kernels), ctx_ (recording through
// cuptiActivityEnableContext/DisableContext); alone (pre_finalize, gt_attached) they take action none. Each state also
// times the host side: a cuGraphLaunch call, an eager cuLaunchKernel call, and a decode-like step (one replay, 8 eager
// kernels, a 4-byte copy to the host).
//
// Build: g++ -O2 -std=c++17 graph_exec_probe.cpp -I$CUDA/include -L$CUDA/lib64 -lcupti -lcuda
// Run:   graph_exec_probe VARIANT [NODES]   (prints one line: key=value ...)
#include <cuda.h>
#include <cupti.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

const char* kPtx = R"(
.version 7.0
.target sm_70
.address_size 64
.visible .entry spin(.param .u64 out, .param .u32 n)
{
  .reg .u32 %r<4>;
  .reg .u64 %rd<3>;
  .reg .pred %p;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, 0;
  mov.u32 %r3, 0;
LOOP:
  setp.ge.u32 %p, %r2, %r1;
  @%p bra DONE;
  add.u32 %r3, %r3, %r2;
  add.u32 %r2, %r2, 1;
  bra LOOP;
DONE:
  cvta.to.global.u64 %rd2, %rd1;
  st.global.u32 [%rd2], %r3;
  ret;
}
)";

std::string g_fault;

bool ok(CUresult r, const char* what)
{
    if (r == CUDA_SUCCESS)
        return true;
    const char* name = nullptr;
    cuGetErrorName(r, &name);
    if (g_fault.empty())
        g_fault = std::string(what) + ":" + (name ? name : "?");
    return false;
}

#define CK(call)                                                                                                       \
    do {                                                                                                               \
        if (!ok((call), #call)) {                                                                                      \
            std::printf("result=fault at=%s\n", g_fault.c_str());                                                      \
            return 2;                                                                                                  \
        }                                                                                                              \
    } while (0)

size_t g_records = 0;

double now()
{
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v)
{
    if (v.empty())
        return -1;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

void CUPTIAPI bufferRequested(uint8_t** buffer, size_t* size, size_t* maxNumRecords)
{
    *size = 8u << 20;
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
    *maxNumRecords = 0;
}

void CUPTIAPI bufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t validSize)
{
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, validSize, &record) == CUPTI_SUCCESS)
        ++g_records;
    std::free(buffer);
}

// Median microseconds per replay over `blocks` blocks of `per` replays, GPU time from CUDA events;
// negative on a fault.
double timeReplays(CUgraphExec exec, CUstream s, int blocks = 9, int per = 20)
{
    CUevent a, b;
    if (!ok(cuEventCreate(&a, CU_EVENT_DEFAULT), "cuEventCreate")
        || !ok(cuEventCreate(&b, CU_EVENT_DEFAULT), "cuEventCreate"))
        return -1;
    std::vector<double> us;
    for (int k = 0; k < blocks; ++k) {
        ok(cuEventRecord(a, s), "cuEventRecord");
        for (int i = 0; i < per; ++i)
            if (!ok(cuGraphLaunch(exec, s), "cuGraphLaunch"))
                return -1;
        ok(cuEventRecord(b, s), "cuEventRecord");
        if (!ok(cuEventSynchronize(b), "cuEventSynchronize"))
            return -1;
        float ms = 0;
        ok(cuEventElapsedTime(&ms, a, b), "cuEventElapsedTime");
        us.push_back(ms * 1000.0 / per);
    }
    cuEventDestroy(a);
    cuEventDestroy(b);
    return median(us);
}

// Host microseconds per call: a cuGraphLaunch, an eager cuLaunchKernel, and a decode-like step (one
// replay, 8 eager kernels, a 4-byte copy to the host that waits for them), medians over blocks.
struct Host {
    double graphLaunch = -1, eagerLaunch = -1, step = -1;
};

Host timeHost(CUgraphExec exec, CUstream s, CUfunction fn, CUdeviceptr buf)
{
    Host h;
    std::vector<double> g, e, st;
    unsigned n = 100;
    void* args[] = { &buf, &n };
    for (int k = 0; k < 9; ++k) {
        auto t0 = now();
        for (int i = 0; i < 4; ++i)
            if (!ok(cuGraphLaunch(exec, s), "cuGraphLaunch"))
                return h;
        g.push_back((now() - t0) / 4);
        if (!ok(cuStreamSynchronize(s), "cuStreamSynchronize"))
            return h;
        t0 = now();
        for (int i = 0; i < 100; ++i)
            if (!ok(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, args, nullptr), "cuLaunchKernel"))
                return h;
        e.push_back((now() - t0) / 100);
        if (!ok(cuStreamSynchronize(s), "cuStreamSynchronize"))
            return h;
        for (int i = 0; i < 6; ++i) {
            t0 = now();
            ok(cuGraphLaunch(exec, s), "cuGraphLaunch");
            for (int j = 0; j < 8; ++j)
                ok(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, args, nullptr), "cuLaunchKernel");
            uint32_t v = 0;
            if (!ok(cuMemcpyDtoH(&v, buf, 4), "cuMemcpyDtoH"))
                return h;
            st.push_back(now() - t0);
        }
    }
    h.graphLaunch = median(g);
    h.eagerLaunch = median(e);
    h.step = median(st);
    return h;
}

void CUPTIAPI noCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) { }

// Where the run got to, on stderr (unbuffered): the last line names the stage of a crash.
void stage(const char* what)
{
    std::fprintf(stderr, "stage=%s\n", what);
}

std::string row(const char* state, double gpu, const Host& h)
{
    char line[256];
    std::snprintf(line, sizeof line, " %s_gpu_us=%.1f %s_graph_launch_us=%.2f %s_eager_launch_us=%.2f %s_step_us=%.1f",
        state, gpu, state, h.graphLaunch, state, h.eagerLaunch, state, h.step);
    return line;
}

// Removes `x` from the end of `s` where `s` ends with it (and is longer); says whether it did.
bool stripSuffix(std::string& s, const char* x)
{
    const size_t n = std::strlen(x);
    if (s.size() <= n || s.compare(s.size() - n, n, x) != 0)
        return false;
    s.erase(s.size() - n);
    return true;
}

} // namespace

int main(int argc, char** argv)
{
    std::string variant = argc > 1 ? argv[1] : "attached";
    // "..._twice": after the replays that follow a finalize and re-attach, cuptiFinalize once more.
    // "..._again": after those replays, a second recording of the exec, then finalize and re-attach
    // the same way once more (what every later capture would do).
    const bool twice = stripSuffix(variant, "_twice");
    const bool again = !twice && stripSuffix(variant, "_again");
    const int nodes = argc > 2 ? std::atoi(argv[2]) : 200;
    const bool finalize = variant.find("finalize") != std::string::npos;
    std::string action = variant;
    if (finalize) // "finalize", "X_finalize", "finalize_reattach", "X_finalize_reattach"
        action = variant.compare(0, 8, "finalize") == 0
            ? "none" + variant.substr(8)
            : variant.substr(0, variant.find("_finalize")) + variant.substr(variant.find("_finalize") + 9);
    // How CUPTI comes back right after the finalize, before the next replay: "_reattach" registers the
    // activity buffer callbacks (no kind on), "_resub" only subscribes to the callback API (nothing
    // enabled), "_rets" only asks CUPTI for a timestamp.
    std::string reattach;
    for (const char* how : { "_reattach", "_resub", "_rets" })
        if (stripSuffix(action, how)) {
            reattach = how + 1;
            break;
        }
    // Prefixes, in this order: "pre_" attaches CUPTI (callbacks, no kind) before the graph is
    // captured and instantiated, as a library loaded at process start does; "gt_" records
    // GRAPH_TRACE (one record per launch) instead of kernels; "ctx_" records through
    // cuptiActivityEnableContext / DisableContext.
    const auto prefix = [&](const char* p) {
        const size_t n = std::strlen(p);
        if (action.compare(0, n, p) != 0 && action != std::string(p, n - 1))
            return false;
        action = action.size() > n ? action.substr(n) : "none";
        return true;
    };
    const bool preAttached = prefix("pre_");
    const bool graphTrace = prefix("gt_");
    const bool perContext = prefix("ctx_");
    const CUpti_ActivityKind kind
        = graphTrace ? CUPTI_ACTIVITY_KIND_GRAPH_TRACE : CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    if (action.compare(0, 6, "eager_") == 0)
        action = action.substr(6);

    CK(cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CUmodule mod;
    CUfunction fn;
    if (preAttached && cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted) != CUPTI_SUCCESS) {
        std::printf("result=cupti_error\n");
        return 3;
    }
    CK(cuModuleLoadData(&mod, kPtx));
    CK(cuModuleGetFunction(&fn, mod, "spin"));
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr buf, buf2;
    CK(cuMemAlloc(&buf, 1 << 20));
    CK(cuMemAlloc(&buf2, 1 << 20));

    // The graph, by stream capture: a memset, NODES kernels, a device copy.
    CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CK(cuMemsetD32Async(buf, 0, 1024, s));
    for (int i = 0; i < nodes; ++i) {
        CUdeviceptr out = buf + 4 * (i % 1024);
        unsigned n = 200 + (i % 7) * 50;
        void* args[] = { &out, &n };
        CK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, args, nullptr));
    }
    CK(cuMemcpyDtoDAsync(buf2, buf, 4096, s));
    CUgraph graph;
    CK(cuStreamEndCapture(s, &graph));
    CUgraphExec exec;
    CK(cuGraphInstantiate(&exec, graph, 0));
    timeReplays(exec, s, 3, 20); // warm
    timeHost(exec, s, fn, buf);
    const double before = timeReplays(exec, s);
    const Host beforeHost = timeHost(exec, s, fn, buf);
    stage("before");

    // CUPTI records kernels, then the kind goes off and the buffers are flushed. eager_*: only eager
    // kernels are launched while it records (no replay); others replay the graph 100 times and launch
    // 100 eager kernels.
    if (cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted) != CUPTI_SUCCESS
        || (perContext ? cuptiActivityEnableContext(ctx, kind) : cuptiActivityEnable(kind)) != CUPTI_SUCCESS) {
        std::printf("result=cupti_error\n");
        return 3;
    }
    stage("enabled");
    const bool eagerOnly = variant.find("eager_") != std::string::npos;
    double recording = 0;
    if (!eagerOnly)
        recording = timeReplays(exec, s, 5, 20);
    stage("replayed");
    {
        unsigned n = 100;
        void* args[] = { &buf, &n };
        for (int i = 0; i < 100; ++i)
            CK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, args, nullptr));
    }
    CK(cuCtxSynchronize());
    if (perContext)
        cuptiActivityDisableContext(ctx, kind);
    else
        cuptiActivityDisable(kind);
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    stage("recorded");
    const size_t recorded = g_records;
    const double attached = timeReplays(exec, s);
    const Host attachedHost = timeHost(exec, s, fn, buf);
    stage("attached");

    // The action on the exec, CUPTI still attached.
    CUgraphExec runExec = exec;
    if (action == "update") {
        CUgraphExecUpdateResultInfo info {};
        CK(cuGraphExecUpdate(exec, graph, &info));
    } else if (action == "setparams") {
        size_t count = 0;
        CK(cuGraphGetNodes(graph, nullptr, &count));
        std::vector<CUgraphNode> all(count);
        CK(cuGraphGetNodes(graph, all.data(), &count));
        for (CUgraphNode node : all) {
            CUgraphNodeType type;
            CK(cuGraphNodeGetType(node, &type));
            if (type != CU_GRAPH_NODE_TYPE_KERNEL)
                continue;
            CUDA_KERNEL_NODE_PARAMS p {};
            CK(cuGraphKernelNodeGetParams(node, &p));
            CK(cuGraphExecKernelNodeSetParams(exec, node, &p));
        }
    } else if (action == "knobs") { // every switch CUPTI offers that might take per-launch work back
        cuptiActivityDisableContext(ctx, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_KERNEL);
        cuptiActivityEnableLatencyTimestamps(0);
        cuptiActivityEnableLaunchAttributes(0);
        cuptiActivityEnableCudaEventDeviceTimestamps(0);
        cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    } else if (action == "upload") {
        CK(cuGraphUpload(exec, s));
        CK(cuStreamSynchronize(s));
    } else if (action == "reinstantiate") {
        CK(cuGraphInstantiate(&runExec, graph, 0));
    } else if (action != "attached" && action != "none" && action != "eager") {
        std::printf("result=usage variant=%s\n", variant.c_str());
        return 1;
    }
    const double afterAction = timeReplays(runExec, s);
    const Host afterActionHost = timeHost(runExec, s, fn, buf);

    // Replays after a finalize, GPU and host timed; false on a fault.
    const auto timeAfter = [&](double& gpu, Host& host) {
        gpu = timeReplays(runExec, s);
        if (gpu >= 0)
            host = timeHost(runExec, s, fn, buf);
        return gpu >= 0 && cuCtxSynchronize() == CUDA_SUCCESS;
    };
    double detached = 0, second = 0;
    Host detachedHost, secondHost;
    std::string result = "ok";
    // cuptiFinalize, then CUPTI back the variant's way (none: stays detached); false where CUPTI refused.
    CUpti_SubscriberHandle subscriber = nullptr;
    const auto finalizeAndReattach = [&](bool back) {
        if (!ok(cuCtxSynchronize(), "cuCtxSynchronize"))
            return false;
        if (subscriber) {
            cuptiUnsubscribe(subscriber);
            subscriber = nullptr;
        }
        if (cuptiFinalize() != CUPTI_SUCCESS)
            return false;
        uint64_t ts = 0;
        if (back && reattach == "reattach")
            return cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted) == CUPTI_SUCCESS;
        if (back && reattach == "resub")
            return cuptiSubscribe(&subscriber, noCallback, nullptr) == CUPTI_SUCCESS;
        if (back && reattach == "rets")
            return cuptiGetTimestamp(&ts) == CUPTI_SUCCESS;
        return true;
    };
    if (finalize) {
        if (!finalizeAndReattach(true))
            result = "finalize_error";
        if (!timeAfter(detached, detachedHost))
            result = "fault";
    }
    if (twice && result == "ok") {
        if (!finalizeAndReattach(false))
            result = "finalize_error";
        if (!timeAfter(second, secondHost))
            result = "fault_at_second_finalize";
    }
    if (again && result == "ok") { // a second recording, finalized and re-attached the same way
        if (cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted) != CUPTI_SUCCESS
            || cuptiActivityEnable(kind) != CUPTI_SUCCESS) {
            result = "cupti_error_at_second_recording";
        } else {
            timeReplays(runExec, s, 5, 20);
            CK(cuCtxSynchronize());
            cuptiActivityDisable(kind);
            cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
            stage("recorded again");
            if (!finalizeAndReattach(true))
                result = "finalize_error";
            if (!timeAfter(second, secondHost))
                result = "fault_at_second_finalize";
        }
    }
    uint32_t cuptiVersion = 0;
    int driverVersion = 0;
    cuptiGetVersion(&cuptiVersion);
    cuDriverGetVersion(&driverVersion);
    std::printf("cupti_api=%u driver=%d ", cuptiVersion, driverVersion);
    std::printf("variant=%s%s nodes=%d records=%zu recording_gpu_us=%.1f%s%s%s%s%s result=%s%s%s\n", variant.c_str(),
        twice       ? "_twice"
            : again ? "_again"
                    : "",
        nodes, recorded, recording, row("before", before, beforeHost).c_str(),
        row("attached", attached, attachedHost).c_str(), row("action", afterAction, afterActionHost).c_str(),
        row("detached", detached, detachedHost).c_str(),
        twice || again ? row("second", second, secondHost).c_str() : "", result.c_str(),
        g_fault.empty() ? "" : " at=", g_fault.c_str());
    return result == "ok" ? 0 : 4;
}
