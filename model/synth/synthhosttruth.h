// SPDX-License-Identifier: MIT
#pragma once

// SynthHostTruth: the ground truth of host attribution for synth, computed from the generated
// timeline by a direct reading of the rule (model/analysis/hostattribution.h): each moment of a
// launch/host gap goes to the innermost host event active on the launching thread (the one that
// started last; of two that started together, the shorter), events that enclose the whole step
// excluded; moments without one are unattributed. A plain O(gaps x events) loop, written apart from
// the analysis so that the two can be compared. Internal to synth. Not thread-safe.

#include "model/base/json.h"
#include "model/trace/trace.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace gapscope::model::synth {

struct HostSpan {
    TimeNs start = 0, end = 0;
    std::string name;
    std::string kind; // "cpu_op", "python_function", "cuda_runtime", "nvtx"
};

class SynthHostTruth {
public:
    // Attributes the gap [a, b) over `spans` (already without the step-level ones).
    void addGap(const std::vector<const HostSpan*>& spans, TimeNs a, TimeNs b);
    // {"launch_host_ns", "explained_ns", "events": [{name, kind, ns, count}] longest first}; count is
    // the host spans of the name that got time, each once however many gaps it spans.
    json::Value toJson() const;

private:
    struct Row {
        std::string kind;
        TimeNs ns = 0;
        uint64_t count = 0;
    };
    std::map<std::string, Row> m_rows;
    std::set<const HostSpan*> m_counted;
    TimeNs m_gapNs = 0, m_explainedNs = 0;
};

} // namespace gapscope::model::synth
