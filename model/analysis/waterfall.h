// SPDX-License-Identifier: MIT
#pragma once

// The waterfall: measured slots of a decomposition (WindowSweep output, per class and idle kind)
// plus the per-step budget -> bars that go from the theoretical total to the measured total.
//
// Slot layout (SlotLayout): one slot per class (the classifier's classes, then one per budget
// component that no class covers), then "collective wait", "unclassified kernels", "memory ops",
// in a trace with whole graph replays "graph replays, nodes not recorded" (the busy slots), then the
// idle kinds "launch/host gaps", "sync stalls", "step gap", "in-graph gaps".
//
// Bar order: budget bars (one per class, then "launch/host floor"), then gap bars
// ("<class> inefficiency" = measured - budget per class, "collective wait", "launch/host gaps" =
// measured - floor, "sync stalls", "step gap", "unclassified kernels", "memory ops"). Without a
// budget: one bar of kind Measured per class, then the same gap bars (floor 0).
// Invariant: the bars add up exactly (integer ns) to the sum of the slots.

#include "model/analysis/barid.h"
#include "model/analysis/windowsweep.h"
#include "model/budget/budget.h"
#include "model/trace/kernelclassifier.h"

#include <map>
#include <string>
#include <vector>

namespace gapscope::model {

enum class BarKind : uint8_t { Budget, Gap, Measured };
const char* toString(BarKind kind); // "budget", "gap", "measured"

struct SlotLayout {
    std::vector<KernelClassifier::Class> classes;
    size_t classifierClasses = 0; // classes[0, classifierClasses) come from the classifier
    // The trace holds whole CUDA-graph replays (model/format/wholegraph.h: a light-mode capture): they
    // get a busy slot of their own, after memory ops, and a bar ("graph replays, nodes not recorded").
    bool wholeGraphs = false;

    size_t waitSlot() const { return classes.size(); }
    size_t unclassifiedSlot() const { return classes.size() + 1; }
    size_t memopsSlot() const { return classes.size() + 2; }
    size_t wholeGraphSlot() const { return classes.size() + 3; } // only when wholeGraphs
    size_t busySlots() const { return classes.size() + 3 + (wholeGraphs ? 1 : 0); }
    size_t idleSlot(IdleKind k) const { return busySlots() + size_t(k); }
    size_t slotCount() const { return busySlots() + kIdleKinds; }
    std::string slotName(size_t slot) const;
    // The gap bar of a slot past the classes (BarId::None for a class slot).
    BarId slotBar(size_t slot) const;
};

// The budget of one decode step per GPU, by budget component name (ms, as the budget gives them).
struct StepBudget {
    bool present = false;
    std::map<std::string, double> componentMs; // "attention", ..., "launch_host" (the floor)
    std::string description; // what it was computed from, for output
    std::vector<std::string> assumptions;
    // Which budget (phasebudget.h): "decode", or "prefill" with its prompt tokens (the mean over the
    // steps it stands for), how many steps it stands for and where their tokens came from. A prefill
    // budget that could not be made is not present and says why.
    std::string phase = "decode";
    double promptTokens = 0;
    uint32_t promptSteps = 0;
    std::string promptTokensFrom; // "steps" (their annotations), "setting", "steps and setting"
    std::string why; // not present: why not ("" when no budget was asked for)
    double totalMs() const;
};

// The per-step budget from a computed Budget: its ideal column (datasheet ceilings, no floors) or
// its achievable column (efficiencies, kernel floors, the launch/host floor).
StepBudget makeStepBudget(const Budget& budget, bool achievable, std::string description);

// Classes of `classifier` plus one class per budget component that none covers (with a budget).
SlotLayout makeSlotLayout(const KernelClassifier& classifier, const StepBudget& budget);

struct Bar {
    std::string name; // display text only: tell bars apart by (id, slot)
    BarKind kind = BarKind::Gap;
    TimeNs ns = 0;
    int slot = -1; // the measured slot the bar is about (for members; the class for class bars); -1: none
    BarId id = BarId::None;
};

// `slotNs`: summed over the steps of the selection; `budgetSteps`: how many steps' budgets to add
// (the step count, or the covered fraction of steps for a time range).
std::vector<Bar> buildWaterfall(
    const SlotLayout& layout, const StepBudget& budget, const std::vector<TimeNs>& slotNs, double budgetSteps);

// The gap bar of an idle kind, and the name of one of its intervals ("launch/host gap").
BarId idleBar(IdleKind kind);
const char* idleKindName(IdleKind kind);

// Budget of a class (sum of its components) for one step, in ns (not rounded).
double classBudgetNs(const KernelClassifier::Class& c, const StepBudget& budget);

} // namespace gapscope::model
