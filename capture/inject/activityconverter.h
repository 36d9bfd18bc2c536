// SPDX-License-Identifier: MIT
#pragma once

// ActivityConverter: turns one CUPTI activity record into a GpuRecord through the adapter of the
// record layout that the running CUPTI writes. CUPTI changes its record structs between releases
// (CUpti_ActivityKernel9 up to CUDA 12.9, CUpti_ActivityKernel10 in 13.0, Memcpy5 -> Memcpy6 and
// Synchronization -> Synchronization2 in 12.8), so the layout is chosen from cuptiGetVersion() at
// run time, never assumed from the headers we were compiled with. An unknown version gets no
// adapter: capture is refused with a message naming the version instead of misreading memory.
//
// Known layouts (API version -> structs):
//   18 .. 25         (CUDA 11.8 .. 12.6): Kernel9,  Memcpy5, Memset4, Synchronization
//   26 .. 28         (CUDA 12.8 .. 12.9): Kernel9,  Memcpy6, Memset4, Synchronization2
//   130000 .. 130099 (CUDA 13.0.x):       Kernel10, Memcpy6, Memset4, Synchronization2
// Runtime/driver API records (CUpti_ActivityAPI) are the same in all of them.
//
// Threading: stateless after construction; used by the library's own thread.

#include "capture/inject/records.h"

#include <cstdint>
#include <string>

namespace gapscope::capture::inject {

enum class CuptiLayout : uint8_t { Unknown = 0, Cuda118To126, Cuda128To129, Cuda130 };

const char* toString(CuptiLayout layout);
CuptiLayout layoutForCuptiVersion(uint32_t apiVersion);
std::string knownCuptiVersions();

class ActivityConverter {
public:
    explicit ActivityConverter(CuptiLayout layout = CuptiLayout::Unknown);

    CuptiLayout layout() const { return m_layout; }
    bool usable() const { return m_layout != CuptiLayout::Unknown; }

    enum class Result : uint8_t {
        Converted, // `out` holds the record
        Skipped, // a kind we do not keep (context, device, ...), or a layout we cannot read
        NoTiming, // a kernel/memop without timestamps (CUPTI could not collect them)
    };
    Result convert(const void* record, GpuRecord& out) const; // record: a CUpti_Activity*

private:
    CuptiLayout m_layout;
};

// A CUDA-graph replay recorded whole (model/format/wholegraph.h): one kernel record on the launching
// stream, from CUPTI's graph-level trace or from the light mode's event pair (replaytimer.h).
GpuRecord wholeReplayRecord(int64_t start, int64_t end, uint32_t correlation, uint32_t device, uint32_t context,
    uint32_t stream, uint64_t graphId);

} // namespace gapscope::capture::inject
