// SPDX-License-Identifier: MIT
#pragma once

// StepRecord and the one reading of a StepBlock's columns (trace.proto): the decoder's visitor, the
// loader's fast path and the overview's reader all walk a block with forEachStep, and every check of a
// block is checkStepColumns. A step is its window on one rank, where it came from, and what it did
// (kind, batch, tokens, the string id of its label). Columns a block leaves out (all zero, or a file
// written before the kind columns existed) read as 0: kind unknown, nothing known.
//
// Pure functions; thread-safe.

#include "model/base/status.h"
#include "model/format/columnwalker.h"
#include "model/format/trace.pb.h"

#include <cstdint>
#include <string>

namespace gapscope::format {

struct StepRecord {
    uint32_t rank = 0;
    uint32_t index = 0;
    int64_t start = 0;
    uint64_t duration = 0;
    uint32_t source = 0; // pb::StepSource
    uint32_t kind = 0; // pb::StepBlock::Kind
    uint32_t batch = 0; // requests in the batch (0: not known)
    uint32_t tokens = 0; // tokens processed (0: not known)
    uint32_t label = 0; // string id of the annotation's text (0: none)
};

// Every column the right length (or absent), label ids defined (`strings`: the ids defined so far).
inline Status checkStepColumns(const pb::StepBlock& b, size_t strings)
{
    const int n = b.rank_size();
    auto ok = [n](const auto& column) { return column.size() == 0 || column.size() == n; };
    if (!ok(b.index()) || !ok(b.start_delta()) || !ok(b.duration()) || !ok(b.source()) || !ok(b.kind())
        || !ok(b.batch()) || !ok(b.tokens()) || !ok(b.label()))
        return Status::error("steps: bad columns");
    for (uint32_t id : b.label())
        if (id > strings)
            return Status::error("steps: label string id " + std::to_string(id) + " not defined");
    return Status::ok();
}

// Calls f(const StepRecord&) for each step of `b` in block order, starts counted from `base` (times
// clamped as ColumnWalker clamps them). Call checkStepColumns first.
template <typename F> void forEachStep(const pb::StepBlock& b, int64_t base, F&& f)
{
    auto at = [](const auto& column, int i) { return column.size() ? uint64_t(column.Get(i)) : 0; };
    uint64_t t = uint64_t(base);
    StepRecord s;
    for (int i = 0; i < b.rank_size(); ++i) {
        t += at(b.start_delta(), i);
        s.rank = b.rank(i);
        s.index = uint32_t(at(b.index(), i));
        s.start = ColumnWalker::clampTime(t);
        s.duration = uint64_t(ColumnWalker::clampDuration(at(b.duration(), i)));
        s.source = uint32_t(at(b.source(), i));
        s.kind = uint32_t(at(b.kind(), i));
        s.batch = uint32_t(at(b.batch(), i));
        s.tokens = uint32_t(at(b.tokens(), i));
        s.label = uint32_t(at(b.label(), i));
        f(static_cast<const StepRecord&>(s));
    }
}

} // namespace gapscope::format
