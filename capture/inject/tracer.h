// SPDX-License-Identifier: MIT
#pragma once

// Tracer: what the rank session asks of the profiling backend. CuptiTracer is the real one (CUPTI
// callback + activity APIs); tests drive the session with a fake that writes hand-built CUPTI
// records into the same Channels, so the session logic runs unchanged here and on the GPU.
//
// Threading: every method is called from the injection library's own thread.

#include "capture/inject/activityconverter.h"
#include "model/base/status.h"
#include "model/format/trace.pb.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gapscope::capture::inject {

enum class StepRule : uint8_t { Graph, Nvtx, Anchor, Time };

// The rule a capture request names (its step_rule: "graph", "nvtx", "anchor", "time"/"duration"; "" and
// "auto" are Graph here, the agent's own choice made first); false for any other text, which the arm
// refuses.
bool parseStepRule(const std::string& text, StepRule* out);
const char* toString(StepRule rule);

class Tracer {
public:
    virtual ~Tracer() = default;

    // CUPTI layout of the running CUPTI (Unknown: capture refused).
    virtual CuptiLayout layout() const = 0;
    virtual uint32_t cuptiVersion() const = 0;

    // Take the CUPTI subscriber and switch on host-side step detection for `rule` (cheap callbacks
    // only, no activity records). Fails when another CUPTI client holds CUPTI (`otherClient` names it).
    virtual Status beginDetection(StepRule rule, const std::string& anchorPattern, std::string* otherClient) = 0;
    // Release the subscriber; no callback stays enabled (but the graph-node watch, below).
    virtual void endDetection() = 0;

    // Watch CUDA-graph building from now on (graphnodes.h): CUPTI's resource callbacks for nodes and
    // graph execs only, never a callback per launch or replay. Off with GAPSCOPE_GRAPH_NODES=0 (it holds
    // the process's one CUPTI subscriber, so torch.profiler or Nsight cannot attach while it runs).
    virtual void watchGraphNodes() { }
    // Between captures, from the library's thread: finishes a detach that completed and takes the
    // graph-node watch up again after it.
    virtual void maintain() { }

    // Enable activity records for the kinds in `settings` into the buffer pool of Channels.
    virtual Status startRecording(const pb::CaptureSettings& settings) = 0;
    // Hand completed buffers to the pool (cuptiActivityFlushAll(0)).
    virtual void flush() = 0;
    // Switch every activity kind off without forcing records out: work already launched keeps
    // getting its timestamps as it completes (flush() hands out completed buffers meanwhile).
    virtual void disableRecording() { }
    // Disable every activity kind and force out what is left.
    virtual void stopRecording() = 0;

    // Whole CUDA-graph replays timed by CUDA events since the last call (the light mode without
    // CUPTI's graph-level trace, replaytimer.h), in order.
    virtual void takeTimedReplays(std::vector<GpuRecord>&) { }
    // Whether the kernels of the graph launch with this correlation id are left out: the light mode
    // timed that replay whole as well, because its kernel records come out wrong (cuptitracer.cpp).
    virtual bool replacedByTimedReplay(uint32_t /*correlation*/) const { return false; }

    // Records of one completed buffer, in order.
    virtual void forEachRecord(const uint8_t* buffer, size_t validSize, const std::function<void(const void*)>& fn) = 0;
    virtual std::string apiName(uint8_t domain, uint32_t cbid) = 0;

    // CUPTI's device record buffers as last set up by startRecording: bytes per buffer and the
    // most buffers per context (0: unknown). GAPSCOPE_CUPTI_DEVICE_BUFFER_BYTES and
    // GAPSCOPE_CUPTI_DEVICE_BUFFER_POOL_LIMIT change them.
    struct DeviceBuffers {
        uint64_t bytes = 0;
        uint64_t poolLimit = 0;
    };
    virtual DeviceBuffers deviceBuffers() const { return {}; }

    // Where CUPTI stands between captures: never used, attached (detecting or recording), idle
    // (attached, nothing enabled, not detached: old driver or GAPSCOPE_CUPTI_DETACH=0), detach
    // pending (until the next CUDA API call returns), detached.
    enum class AttachState : uint8_t { Never, Attached, Idle, DetachPending, Detached };
    virtual AttachState attachState() const { return AttachState::Never; }

    // Why CUPTI will stay attached once the current capture ends (empty: it detaches, or nothing was
    // recorded): the rank reports it with the capture's counters.
    virtual std::string staysAttachedWhy() const { return {}; }
};

} // namespace gapscope::capture::inject
