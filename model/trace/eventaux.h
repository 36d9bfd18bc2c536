// SPDX-License-Identifier: MIT
#pragma once

// Packing of LaneEvents::aux (internal to the trace core): the top 3 bits hold the EventKind, the
// low 29 bits its payload: kernel -> launch config index, memcpy/memset -> memop index, API ->
// ApiKind, sync -> sync index, NVTX -> nesting depth, collective -> collective index, host -> HostKind
// in the top 3 payload bits and the nesting depth in the low 26.

#include "model/trace/trace.h"

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

constexpr uint32_t kHostDepthBits = 26;
constexpr uint32_t kMaxHostDepth = (1u << kHostDepthBits) - 1;
constexpr uint32_t packHost(HostKind kind, uint32_t depth)
{
    return pack(EventKind::Host, uint32_t(kind) << kHostDepthBits | (depth < kMaxHostDepth ? depth : kMaxHostDepth));
}
constexpr HostKind hostKind(uint32_t a)
{
    return HostKind(payload(a) >> kHostDepthBits);
}
// Nesting depth of an event of a lane whose ranges nest (NVTX, host), 0 for any other event.
constexpr uint32_t depth(uint32_t a)
{
    return kind(a) == EventKind::Nvtx ? payload(a) : kind(a) == EventKind::Host ? payload(a) & kMaxHostDepth : 0;
}
constexpr bool nests(uint32_t a)
{
    return kind(a) == EventKind::Nvtx || kind(a) == EventKind::Host;
}

} // namespace gapscope::model::aux
