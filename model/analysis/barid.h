// SPDX-License-Identifier: MIT
#pragma once

// BarId: what a waterfall bar is, declared once. kBars is the one table of the bars' vocabulary:
// the display name (for class bars, the suffix after the class name), the viewer's colour (class
// bars take their class's colour) and what the bar means in plain words, and for the idle bars the
// name of one of their intervals. Findings, reports and the viewer tell bars apart by BarId (plus
// the slot for class bars), never by their text.
//
// Invariant (checked at compile time): kBars[i].id == BarId(i). Constant data; thread-safe.

#include "model/format/enumtable.h"

#include <cstddef>
#include <cstdint>

namespace gapscope::model {

enum class BarId : uint8_t {
    None, // no bar (a finding about none)
    ClassBudget, // "<class>": the budget of a class (kind Budget)
    ClassMeasured, // "<class>": a class's measured time when there is no budget (kind Measured)
    LaunchFloor, // "launch/host floor" (kind Budget)
    ClassInefficiency, // "<class> inefficiency": measured - budget of a class
    CollectiveWait,
    LaunchHostGaps, // measured launch/host idle - floor
    SyncStalls,
    StepGap,
    UnclassifiedKernels,
    MemoryOps,
    InGraphGaps, // idle between two pieces of work of one CUDA-graph launch
    WholeGraphReplays, // CUDA-graph replays recorded whole (light mode), their kernels unknown
};
inline constexpr size_t kBarIdCount = 13;

inline constexpr uint32_t kClassColor = 0xffffffff; // the bar's class's colour

struct BarInfo {
    BarId id;
    const char* name; // the display name; for class bars the suffix after the class name
    uint32_t rgb; // 0xRRGGBB, or kClassColor
    const char* meaning; // "" when the name says it all
    const char* intervalName; // one idle interval of the bar ("launch/host gap"), "" for busy bars
};

inline constexpr BarInfo kBars[] = {
    { BarId::None, "", kClassColor, "", "" },
    { BarId::ClassBudget, "", kClassColor, "", "" },
    { BarId::ClassMeasured, "", kClassColor, "", "" },
    { BarId::LaunchFloor, "launch/host floor", 0x9e9e9e, "", "launch/host gap" },
    { BarId::ClassInefficiency, " inefficiency", kClassColor, "", "" },
    { BarId::CollectiveWait, "collective wait", 0xe53935, "collectives waiting for the last rank to arrive", "" },
    { BarId::LaunchHostGaps, "launch/host gaps", 0x9e9e9e, "the GPU waited for the host to launch work",
        "launch/host gap" },
    { BarId::SyncStalls, "sync stalls", 0xd32f2f, "the GPU ran dry while the host was blocked in a synchronisation",
        "sync stall" },
    { BarId::StepGap, "step gap", 0x616161,
        "the GPU was idle between the last kernel of a step and the start of the next", "step gap" },
    { BarId::UnclassifiedKernels, "unclassified kernels", 0xb0bec5,
        "kernels no classifier rule matches (edit the table: --classifier)", "" },
    { BarId::MemoryOps, "memory ops", 0x00bcd4, "memcpy and memset", "" },
    { BarId::InGraphGaps, "in-graph gaps", 0xbdbdbd,
        "the GPU was idle inside a CUDA-graph replay, between two kernels of one launch (dependencies, host nodes, "
        "the graph's own launch latency): the host had launched the whole replay already",
        "in-graph gap" },
    { BarId::WholeGraphReplays, "graph replays, nodes not recorded", 0x78909c,
        "CUDA-graph replays a light-mode capture (--detail-every) recorded as a whole: busy, but which kernels ran "
        "is known only in the detailed steps",
        "" },
};

static_assert(rowsFollowEnum(kBars, kBarIdCount), "kBars: one row per BarId, in enum order");

inline const BarInfo& barInfo(BarId id)
{
    return kBars[size_t(id)];
}
// A bar of one class (budget, measured or inefficiency): its name starts with the class's name.
inline bool isClassBar(BarId id)
{
    return id == BarId::ClassBudget || id == BarId::ClassMeasured || id == BarId::ClassInefficiency;
}

} // namespace gapscope::model
