// SPDX-License-Identifier: MIT
// Entry points of libgapscope-inject.so:
//   InitializeInjection       called by the CUDA driver (CUDA_INJECTION64_PATH) during cuInit;
//   InitializeInjectionNvtx2  called by NVTX (NVTX_INJECTION64_PATH), see nvtxhooks.cpp;
//   ncclProfiler_v5/v4/v3     read by NCCL (NCCL_PROFILER_PLUGIN), see ncclplugin.cpp.
//
// InitializeInjection only starts the library's own thread and returns: no CUDA or CUPTI call
// happens inside cuInit. The thread starts the graph-node watch (graphnodes.h: CUPTI resource
// callbacks for graph building only; GAPSCOPE_GRAPH_NODES=0 leaves it off); nothing else is enabled
// until an agent arms the process. The thread waits for a CUDA context, connects to the agent's
// socket (quiet retries with backoff while there is none) and serves captures (RankSession). Any
// exception is caught at the thread's top: the library goes quiet instead of taking the process
// down. GAPSCOPE_INJECT_DISABLE=1 turns it all off;
// GAPSCOPE_INJECT_LOG=1 prints connection changes to stderr; GAPSCOPE_INJECT_CRASH_TRACE=1 prints the
// native frames of a fatal signal (crashtrace.h).

#include "capture/inject/channels.h"
#include "capture/inject/crashtrace.h"
#include "capture/inject/cuptitracer.h"
#include "capture/inject/gpuidentity.h"
#include "capture/inject/ranksession.h"
#include "capture/protocol/socketpath.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace gapscope::capture::inject {

namespace {

std::atomic<bool> g_started { false };
std::atomic<bool> g_stop { false };
std::atomic<bool> g_threadDone { false };

bool logging()
{
    const char* v = std::getenv("GAPSCOPE_INJECT_LOG");
    return v && *v && *v != '0';
}

void sleepMs(int ms)
{
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

void serveForever()
{
    CuptiTracer tracer(channels());
    tracer.watchGraphNodes(); // before the process builds its CUDA graphs (model load, warm-up)
    GpuIdentity identity(tracer.cuptiVersion());
    RankSession session(channels(), tracer, [&identity] { return identity.read(); });
    const bool log = logging();
    int backoffMs = 100;
    bool announcedWait = false;
    while (!g_stop.load()) {
        tracer.maintain();
        if (!identity.ready()) {
            sleepMs(200);
            continue;
        }
        const std::string path = defaultAgentSocketPath();
        AgentLink link;
        if (Status s = link.connect(path); !s) {
            if (log && !announcedWait)
                std::fprintf(stderr, "gapscope-inject: no agent at %s yet (%s); retrying quietly\n", path.c_str(),
                    s.message().c_str());
            announcedWait = true;
            sleepMs(backoffMs);
            backoffMs = std::min(backoffMs * 2, 5000);
            continue;
        }
        backoffMs = 100;
        announcedWait = false;
        if (log)
            std::fprintf(stderr, "gapscope-inject: connected to %s\n", path.c_str());
        const std::string why = session.serve(link, g_stop);
        if (log)
            std::fprintf(stderr, "gapscope-inject: connection ended: %s\n", why.c_str());
        sleepMs(500);
    }
}

void threadMain()
{
    try {
        sleepMs(50); // let cuInit finish before the first driver call
        serveForever();
    } catch (...) {
        // Never let anything escape into the application: stay quiet from here on.
        channels().nvtxMode.store(0);
    }
    g_threadDone.store(true);
}

void atExit()
{
    g_stop.store(true);
    // Give the thread a moment to disarm and say goodbye; never block exit for long.
    for (int i = 0; i < 20 && !g_threadDone.load(); ++i)
        sleepMs(10);
}

} // namespace

} // namespace gapscope::capture::inject

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void)
{
    using namespace gapscope::capture::inject;
    const char* off = std::getenv("GAPSCOPE_INJECT_DISABLE");
    if (off && *off && *off != '0')
        return 1;
    if (g_started.exchange(true))
        return 1;
    installCrashTraceFromEnv();
    try {
        std::thread(threadMain).detach();
        std::atexit(atExit);
    } catch (...) {
        // No thread: the library stays idle.
    }
    return 1;
}
