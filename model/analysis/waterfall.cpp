// SPDX-License-Identifier: MIT
#include "model/analysis/waterfall.h"

#include <algorithm>
#include <cmath>

namespace gapscope::model {

const char* toString(BarKind kind)
{
    switch (kind) {
    case BarKind::Budget:
        return "budget";
    case BarKind::Gap:
        return "gap";
    case BarKind::Measured:
        return "measured";
    }
    return "gap";
}

BarId SlotLayout::slotBar(size_t slot) const
{
    if (slot < classes.size())
        return BarId::None;
    if (slot == waitSlot())
        return BarId::CollectiveWait;
    if (slot == unclassifiedSlot())
        return BarId::UnclassifiedKernels;
    if (slot == memopsSlot())
        return BarId::MemoryOps;
    if (wholeGraphs && slot == wholeGraphSlot())
        return BarId::WholeGraphReplays;
    return slot < slotCount() ? idleBar(IdleKind(slot - busySlots())) : BarId::None;
}

BarId idleBar(IdleKind kind)
{
    switch (kind) {
    case IdleKind::LaunchHost:
        return BarId::LaunchHostGaps;
    case IdleKind::SyncStall:
        return BarId::SyncStalls;
    case IdleKind::StepGap:
        return BarId::StepGap;
    case IdleKind::InGraph:
        return BarId::InGraphGaps;
    }
    return BarId::None;
}

const char* idleKindName(IdleKind kind)
{
    return barInfo(idleBar(kind)).intervalName;
}

std::string SlotLayout::slotName(size_t slot) const
{
    if (slot < classes.size())
        return classes[slot].name;
    BarId id = slotBar(slot);
    return id == BarId::None ? "?" : barInfo(id).name;
}

double StepBudget::totalMs() const
{
    double t = 0;
    for (const auto& [name, ms] : componentMs)
        t += ms;
    return t;
}

double classBudgetNs(const KernelClassifier::Class& c, const StepBudget& budget)
{
    double ns = 0;
    for (const auto& comp : c.components)
        if (auto it = budget.componentMs.find(comp); it != budget.componentMs.end())
            ns += it->second * 1e6;
    return ns;
}

StepBudget makeStepBudget(const Budget& budget, bool achievable, std::string description)
{
    StepBudget s;
    s.present = true;
    s.description = std::move(description);
    s.assumptions = budget.assumptions;
    for (const auto& c : kComponents)
        s.componentMs[c.name] = budget.componentMs(c.id, achievable);
    return s;
}

SlotLayout makeSlotLayout(const KernelClassifier& classifier, const StepBudget& budget)
{
    SlotLayout l;
    l.classes = classifier.classes();
    l.classifierClasses = l.classes.size();
    for (const auto& info : kComponents) {
        if (info.role != ComponentRole::Kernels)
            continue;
        const std::string comp = info.name;
        auto it = budget.componentMs.find(comp);
        if (it == budget.componentMs.end() || it->second == 0)
            continue;
        bool covered = std::any_of(l.classes.begin(), l.classes.end(), [&](const KernelClassifier::Class& c) {
            return std::find(c.components.begin(), c.components.end(), comp) != c.components.end();
        });
        if (!covered)
            l.classes.push_back(KernelClassifier::Class { comp, { comp } });
    }
    return l;
}

std::vector<Bar> buildWaterfall(
    const SlotLayout& layout, const StepBudget& budget, const std::vector<TimeNs>& slotNs, double budgetSteps)
{
    std::vector<Bar> bars;
    const size_t n = layout.classes.size();
    auto rounded = [&](double perStepNs) { return TimeNs(std::llround(perStepNs * budgetSteps)); };
    std::vector<TimeNs> classBudget(n, 0);
    TimeNs floorNs = 0;
    if (budget.present) {
        for (size_t c = 0; c < n; ++c) {
            classBudget[c] = rounded(classBudgetNs(layout.classes[c], budget));
            bars.push_back(Bar { layout.classes[c].name, BarKind::Budget, classBudget[c], int(c), BarId::ClassBudget });
        }
        auto it = budget.componentMs.find(toString(Component::LaunchHost));
        floorNs = it == budget.componentMs.end() ? 0 : rounded(it->second * 1e6);
        bars.push_back(Bar { barInfo(BarId::LaunchFloor).name, BarKind::Budget, floorNs,
            int(layout.idleSlot(IdleKind::LaunchHost)), BarId::LaunchFloor });
        for (size_t c = 0; c < n; ++c)
            bars.push_back(Bar { layout.classes[c].name + barInfo(BarId::ClassInefficiency).name, BarKind::Gap,
                slotNs[c] - classBudget[c], int(c), BarId::ClassInefficiency });
    } else {
        for (size_t c = 0; c < n; ++c)
            bars.push_back(Bar { layout.classes[c].name, BarKind::Measured, slotNs[c], int(c), BarId::ClassMeasured });
    }
    auto gap = [&](size_t slot, TimeNs minus = 0) {
        bars.push_back(
            Bar { layout.slotName(slot), BarKind::Gap, slotNs[slot] - minus, int(slot), layout.slotBar(slot) });
    };
    gap(layout.waitSlot());
    gap(layout.idleSlot(IdleKind::LaunchHost), floorNs);
    gap(layout.idleSlot(IdleKind::InGraph));
    gap(layout.idleSlot(IdleKind::SyncStall));
    gap(layout.idleSlot(IdleKind::StepGap));
    gap(layout.unclassifiedSlot());
    gap(layout.memopsSlot());
    if (layout.wholeGraphs)
        gap(layout.wholeGraphSlot());
    return bars;
}

} // namespace gapscope::model
