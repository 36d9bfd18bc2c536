// SPDX-License-Identifier: MIT
#pragma once

// Packing of LaneEvents::aux (internal to the trace core): the top 3 bits hold the EventKind, the
// low 29 bits its payload: kernel -> launch config index, memcpy/memset -> memop index, API ->
// ApiKind, sync -> sync index, NVTX -> nesting depth, collective -> collective index.

#include "model/trace.h"

namespace gapscope::model::aux {

constexpr uint32_t kPayloadBits = 29; // Trace::kindOf (trace.h) relies on this value
constexpr uint32_t kPayloadMask = (1u << kPayloadBits) - 1;
constexpr uint32_t kMaxPayload = kPayloadMask;

constexpr uint32_t pack(EventKind kind, uint32_t payload)
{
    return uint32_t(kind) << kPayloadBits | (payload & kPayloadMask);
}
constexpr EventKind kind(uint32_t a)
{
    return EventKind(a >> kPayloadBits);
}
constexpr uint32_t payload(uint32_t a)
{
    return a & kPayloadMask;
}

} // namespace gapscope::model::aux
