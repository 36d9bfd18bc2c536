// SPDX-License-Identifier: MIT
#include "views/analysis/waterfalldata.h"

#include "views/common/eventcolors.h"

#include <algorithm>

double WaterfallData::budgetMs() const
{
    double sum = 0;
    for (const auto& b : bars) {
        if (b.kind == WaterfallBar::Kind::Budget)
            sum += b.ms;
    }
    return sum;
}

double WaterfallData::barsTotalMs() const
{
    double sum = 0;
    for (const auto& b : bars)
        sum += b.ms;
    return sum;
}

std::vector<WaterfallColumn> WaterfallData::columns(bool hideEmpty) const
{
    std::vector<WaterfallColumn> out;
    out.reserve(bars.size() + 2);
    double running = 0;
    auto add = [&](int i) {
        const WaterfallBar& b = bars[size_t(i)];
        if (hideEmpty && b.zeroInEveryStep && b.ms == 0)
            return;
        WaterfallColumn c;
        c.label = b.name;
        c.value = b.ms;
        c.low = std::min(running, running + b.ms);
        c.high = std::max(running, running + b.ms);
        c.bar = i;
        c.color = EventColors::barColor(b.id, b.className);
        if (b.kind == WaterfallBar::Kind::Gap && b.ms < 0)
            c.color = QColor(165, 214, 167); // faster than the budget: drawn pale green
        running += b.ms;
        out.push_back(c);
    };
    bool anyBudget = false;
    for (int i = 0; i < int(bars.size()); ++i) {
        if (bars[size_t(i)].kind == WaterfallBar::Kind::Budget) {
            add(i);
            anyBudget = true;
        }
    }
    if (anyBudget) {
        WaterfallColumn budget;
        budget.label = QStringLiteral("budget");
        budget.high = budget.value = running;
        budget.total = true;
        budget.color = QColor(38, 50, 56);
        out.push_back(budget);
    }
    for (int i = 0; i < int(bars.size()); ++i) {
        if (bars[size_t(i)].kind == WaterfallBar::Kind::Measured)
            add(i);
    }
    for (int i = 0; i < int(bars.size()); ++i) {
        if (bars[size_t(i)].kind == WaterfallBar::Kind::Gap)
            add(i);
    }
    WaterfallColumn measured;
    measured.label = QStringLiteral("measured");
    measured.high = measured.value = running;
    measured.total = true;
    measured.color = QColor(183, 28, 28);
    out.push_back(measured);
    return out;
}
