// SPDX-License-Identifier: MIT
#pragma once

// CuptiTracer: the real Tracer, on CUPTI's callback and activity APIs.
//
// Detection (armed, not recording): holds the single CUPTI subscriber (so another client is
// detected instead of silently broken: cuptiSubscribe_v2 names it) and enables API-entry callbacks
// only for what the step rule needs: cudaGraphLaunch / cuGraphLaunch (graph rule) or the kernel
// launch APIs (anchor rule; the callback queues the launch's symbol, matching happens later on the
// library's thread). NVTX and time rules enable no callback at all.
// Recording: registers the buffer callbacks of Channels' pool and enables CONCURRENT_KERNEL,
// MEMCPY, MEMSET, SYNCHRONIZATION and a selected set of runtime/driver APIs (launches, copies,
// syncs: enough for launch -> start correlation without tracing every cudaGetDevice).
// With CaptureSettings.detail_every = N > 1 (the light mode for CUDA-graph decode) kernels are
// recorded for every Nth graph launch only and each other replay as one graph-level record
// (GRAPH_TRACE, model/format/wholegraph.h); kernels launched outside graphs only while a detailed
// launch's kinds are on.
// Everything is disabled again at stopRecording(); the subscriber is released at endDetection().
// After a process has recorded, endDetection() also detaches CUPTI (cuptiFinalize, at the exit of
// the next CUDA API call), because activity kinds once enabled leave a cost on every later API call
// even when disabled; the next arm attaches it again (CUPTI initializes lazily).
// GAPSCOPE_CUPTI_DETACH=0 keeps it attached; drivers before CUDA 12.6 are never detached.
//
// Threading: methods on the library's thread; the static callbacks run on application/CUPTI
// threads and only push to Channels (never block, never throw).

#include "capture/inject/channels.h"
#include "capture/inject/tracer.h"

#include <vector>

namespace gapscope::capture::inject {

class CuptiTracer : public Tracer {
public:
    explicit CuptiTracer(Channels& channels);
    ~CuptiTracer() override;

    CuptiLayout layout() const override { return m_layout; }
    uint32_t cuptiVersion() const override { return m_version; }
    Status beginDetection(StepRule rule, const std::string& anchorPattern, std::string* otherClient) override;
    void endDetection() override;
    Status startRecording(const pb::CaptureSettings& settings) override;
    void flush() override;
    void disableRecording() override;
    void stopRecording() override;
    void takeTimedReplays(std::vector<GpuRecord>& out) override;
    bool replacedByTimedReplay(uint32_t correlation) const override;
    void forEachRecord(const uint8_t* buffer, size_t validSize, const std::function<void(const void*)>& fn) override;
    std::string apiName(uint8_t domain, uint32_t cbid) override;
    DeviceBuffers deviceBuffers() const override { return m_deviceBuffers; }
    AttachState attachState() const override;
    std::string staysAttachedWhy() const override;
    void watchGraphNodes() override;
    void maintain() override;

    // Launch/copy/sync APIs recorded as API activity (runtime and driver callback ids).
    static const std::vector<uint32_t>& runtimeApis();
    static const std::vector<uint32_t>& driverApis();

private:
    enum class DetachPolicy { NeverAsked, NeverOldDriver, UnlessGraphKernels, Always };
    static DetachPolicy detachPolicy();
    void settleDetach();
    bool requestDetach(int64_t delayNs);
    static int64_t watchReleaseNs();
    void maybeReleaseWatch();
    // How much of the graph-node watch runs (GAPSCOPE_GRAPH_NODES): 0 none; `subscribe` the subscriber
    // alone, no callback (what an attached CUPTI costs by itself); `resources` the node callbacks without
    // the graph-building calls' (nodes then carry no call); anything else, the whole watch.
    enum class WatchLevel { Off, Subscribe, Resources, Full };
    static WatchLevel watchLevel();
    Status subscribe(std::string* otherClient);
    void enableResourceCallbacks(bool on);
    void enableCallbacks(bool on);
    void enableGraphCallbacks(bool on);
    void configureDeviceBuffers();

    uint32_t m_version = 0;
    CuptiLayout m_layout = CuptiLayout::Unknown;
    void* m_subscriber = nullptr; // CUpti_SubscriberHandle
    bool m_detecting = false; // between beginDetection and endDetection
    bool m_watching = false; // the graph-node resource callbacks are on
    bool m_watchRefused = false; // another CUPTI client held CUPTI at the watch (said once)
    bool m_watchReleased = false; // the watch let CUPTI go (maybeReleaseWatch) and is not taken up again
    int64_t m_watchSinceNs = 0; // steady-clock time the watch last began
    StepRule m_rule = StepRule::Graph;
    bool m_recording = false;
    bool m_disabled = false; // recording, kinds already switched off (disableRecording)
    bool m_light = false; // recording in the light mode (CaptureSettings.detail_every > 1)
    std::vector<int> m_kinds; // enabled CUpti_ActivityKind values
    bool m_everRecorded = false; // activity was enabled since CUPTI was last attached
    bool m_detachRequested = false; // endDetection() asked for cuptiFinalize; beginDetection settles it
    uint32_t m_detaches = 0;
    DeviceBuffers m_deviceBuffers;
};

} // namespace gapscope::capture::inject
