// SPDX-License-Identifier: MIT
#pragma once

// SglangRanks: the ranks SGLang writes into the names of its torch.profiler traces.
//   - per-rank files: "{profile_id}-TP-3.trace.json.gz", also with "-DP-1", "-PP-0", "-EP-2";
//   - merged files (its `merge_profiles` option, python/sglang/srt/utils/profile_merger.py): every
//     event's pid becomes "[TP03-DP01] 1234" (the original pid after the label; "[TP00] Spans").
// A label's rank counts TP fastest, then PP, then DP: rank = tp + nTp * (pp + nPp * dp), with the
// sizes taken from the largest index seen among the labels of the trace (EP ranks are TP ranks in
// SGLang's layout, so EP alone gives the rank only when no TP is named).
//
// Pure functions; thread-safe.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace gapscope::model::importer {

class SglangRanks {
public:
    struct Label {
        int tp = -1, dp = -1, pp = -1, ep = -1; // -1: not named
        bool operator==(const Label& o) const { return tp == o.tp && dp == o.dp && pp == o.pp && ep == o.ep; }
    };
    // "[TP01-DP00] 1234": the label and what follows it ("1234"); false when `pid` is no such label.
    static bool parsePid(std::string_view pid, Label& label, std::string_view& rest);
    // The label in a per-rank file name ("...-TP-3.trace.json.gz", "...-DP-1-TP-0..."); false without TP/EP.
    static bool parseFileName(std::string_view path, Label& label);
    // The ranks of `labels` (see above), in the same order.
    static std::vector<uint32_t> ranksOf(const std::vector<Label>& labels);
};

} // namespace gapscope::model::importer
