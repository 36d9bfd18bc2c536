// SPDX-License-Identifier: MIT
#pragma once

// SynthGenerator: the lockstep simulation behind synth.h. For every step it plays each rank's host
// thread (NVTX range, graph or kernel launches, syncs) and compute stream (kernels one after another,
// each starting when both the stream is free and its launch has arrived), with collectives ending
// together on all ranks. Ground truth is computed from the generated timeline with the rules of
// model/analysis/README.md (single stream: no concurrency to split). Internal to synth. Not thread-safe.

#include "model/base/json.h"
#include "model/synth/synth.h"
#include "model/synth/synthcatalog.h"
#include "model/synth/synthhosttruth.h"
#include "model/synth/synthsink.h"

#include <map>

namespace gapscope::model::synth {

// xoshiro256** with a cached Box-Muller normal: fast, deterministic across platforms.
class Rng {
public:
    explicit Rng(uint64_t seed = 1);
    uint64_t next();
    double uniform(); // [0, 1)
    double normal(); // mean 0, sigma 1

private:
    uint64_t m_s[4];
    double m_spare = 0;
    bool m_hasSpare = false;
};

class SynthGenerator {
public:
    SynthGenerator(const SynthOptions& options, SynthSink& sink, json::Value* truth);
    Status run();
    static TraceHeader header(const SynthOptions& options);
    static json::Value optionsJson(const SynthOptions& options);

private:
    struct Segment {
        TimeNs start, end, wait;
        int cls; // index into m_classes; -1 = memory op
        TimeNs launch; // start of the API call that launched it
    };
    struct Call { // a launching API call
        TimeNs start = 0, end = 0;
    };
    struct Rank {
        uint32_t rank = 0;
        uint32_t gpuLane = 0, apiLane = 0, nvtxLane = 0, collLane = 0, cpuLane = 0;
        TimeNs host = 0, gpu = 0, ready = 0;
        uint32_t corr = 1;
        uint32_t launchCorr = 0; // graph mode: correlation id of the current graph launch
        uint64_t graph = 0, nextNode = 0;
        uint64_t sequence = 0;
        double speed = 1;
        Rng rng;
        TimeNs nvtxStart = 0, stepStart = 0;
        bool stepStarted = false;
        std::vector<Segment> segments;
        std::vector<std::pair<TimeNs, TimeNs>> syncs;
        json::Value truthSteps = json::Value::array();
        uint32_t lateCollectives = 0;
        Call launch; // the call that launched the work being issued now
        TimeNs forwardStart = 0; // host ops: the step's Python frame
        std::vector<HostSpan> hostSpans; // truth: the thread's host events (API calls included)
        std::vector<Call> stepLaunches; // truth: the launching call of each segment, in order
    };

    void setupLanes();
    void beginStep(Rank& r, uint32_t step);
    void launchGraph(Rank& r, uint64_t graphId);
    TimeNs startOf(Rank& r, size_t k);
    void kernel(Rank& r, size_t k, const KernelTemplate& t, TimeNs start, TimeNs dur, TimeNs wait);
    void collective(size_t k, const KernelTemplate& t);
    void syncStall(Rank& r);
    void api(Rank& r, TimeNs start, TimeNs dur, uint32_t name, const char* text, uint32_t corr);
    void hostOp(
        Rank& r, TimeNs start, TimeNs dur, uint32_t name, const std::string& text, HostKind kind, uint32_t depth);
    void endStep(Rank& r, uint32_t step);
    void closeTruth(Rank& r, uint32_t step, TimeNs windowEnd);
    bool sameGraphLaunch(const Segment& before, const Segment& after) const;
    json::Value hostTruth(const Rank& r) const;
    void writeTruth();
    TimeNs jittered(Rank& r, double us, double sigma);
    TimeNs us(double v) const { return TimeNs(v * 1000.0 + 0.5); }
    int classIndex(const char* cls);

    SynthOptions m_o;
    SynthSink& m_sink;
    json::Value* m_truth;
    std::vector<const KernelTemplate*> m_seq;
    std::vector<uint32_t> m_nameIds, m_configIds;
    std::vector<int> m_seqClass;
    std::vector<std::string> m_classes;
    std::vector<Rank> m_ranks;
    Rng m_shared;
    uint32_t m_strStep = 0, m_strGraphLaunch = 0, m_strLaunch = 0, m_strSync = 0, m_strMemcpy = 0;
    uint32_t m_strBf16 = 0, m_strRing = 0, m_strLL = 0;
    uint32_t m_strForward = 0, m_strReplay = 0, m_strHostDelay = 0;
    std::map<int, uint32_t> m_opNames; // class index -> "aten::<class>"
    std::map<std::string, uint32_t> m_opIds;
};

} // namespace gapscope::model::synth
