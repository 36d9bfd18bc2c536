// SPDX-License-Identifier: MIT
#pragma once

// StepOverlayData: one step of A stacked over the matching step of B on one time axis, both aligned
// at their step start (time 0), so the same kernels can be seen shifting. Rows: each GPU stream of
// A's rank, then each of B's rank (the rank pairing of model::TraceDiff::ranks()); each row holds the
// events inside the step window (GapAnalyzer's [start of step i, start of step i+1)), clipped to it,
// as offsets from the step start. Pure (no widgets), any thread; O(events of the step).

#include "views/compare/comparison.h"

#include <QRgb>
#include <QString>

#include <vector>

struct OverlayBox {
    gapscope::model::TimeNs t0 = 0, t1 = 0; // from the step start
    gapscope::model::StringId name = 0;
    QRgb color = 0;
};

struct OverlayRow {
    QString label; // "A r0 s7"
    bool b = false; // a row of B
    std::vector<OverlayBox> boxes;
};

struct StepOverlayData {
    bool valid = false;
    uint32_t step = 0;
    uint32_t rankA = 0, rankB = 0;
    gapscope::model::TimeNs aStepNs = 0, bStepNs = 0; // the two windows' lengths
    std::vector<OverlayRow> rows; // A's streams, then B's
    gapscope::model::TimeNs spanNs() const { return std::max(aStepNs, bStepNs); }

    // `rankPair`: index into diff->ranks(); invalid when a side lacks the rank or the step.
    static StepOverlayData make(const Comparison& c, size_t rankPair, uint32_t step);
};
