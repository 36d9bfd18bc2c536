// SPDX-License-Identifier: MIT
#pragma once

// WaterfallData: the columns of the budget waterfall, from the theoretical budget's components,
// through the gap bars of the analysis, to the measured step time.
//
//   budget bars   float one after another from 0 up to the budget total,
//   "budget"      a total column 0 .. sum(budget bars) (left out when there are no budget bars),
//   gap bars      float from the running total by their (possibly negative) amount,
//   "measured"    a total column 0 .. sum(all bars) (== the measured time: the analysis' bars add up).
//
// Without a budget, Measured bars (time per class) take the place of the budget bars.
// columns(hideEmpty) leaves out the bars that are zero in every step of the trace (a budget
// component the model does not have, a class nothing ran in); their totals stay the same.
// Invariants of columns(): one column per bar plus the totals, in that order; low <= high;
// a column's span (high - low) equals |bar.ms|. Pure value type, no threading concerns.

#include "model/analysis/barid.h"

#include <QColor>
#include <QString>

#include <vector>

struct WaterfallBar {
    enum class Kind { Budget, Gap, Measured }; // Measured: a class's time when there is no budget
    QString name;
    Kind kind = Kind::Budget;
    double ms = 0;
    QString detail; // e.g. "memory-bound, 1.2 GB" or the plain-words explanation of a gap
    bool zeroInEveryStep = false; // 0 in every step of every rank, not only in this selection
    gapscope::model::BarId id = gapscope::model::BarId::None; // what the bar is: tell bars apart by (id, slot)
    int slot = -1; // the analysis slot (the class of a class bar); -1: none
    QString className; // the class of a class bar (its colour)
};

struct WaterfallColumn {
    QString label;
    double low = 0;
    double high = 0;
    double value = 0; // signed amount of the bar (or the total)
    int bar = -1; // index into bars, -1 for the two total columns
    bool total = false;
    QColor color;
};

struct WaterfallData {
    QString title; // e.g. "rank 3 · median step (step 412) · GLM-5 on 8x H200"
    std::vector<WaterfallBar> bars;
    double measuredMs = 0; // as reported by the analysis (used to check the bars)

    double budgetMs() const;
    double barsTotalMs() const;
    // Columns in display order (see the header comment).
    std::vector<WaterfallColumn> columns(bool hideEmpty = false) const;
};
