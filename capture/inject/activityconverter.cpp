// SPDX-License-Identifier: MIT
#include "capture/inject/activityconverter.h"

#include "model/format/wholegraph.h"

#include <cupti_activity.h>
#include <cupti_activity_deprecated.h>

#include <cstring>

namespace gapscope::capture::inject {

namespace {

// Copies the record into a properly typed local (CUPTI buffers are 8-byte aligned, but a copy keeps
// this independent of that and of strict aliasing).
template <typename T> T load(const CUpti_Activity* record)
{
    T value;
    std::memcpy(&value, record, sizeof(T));
    return value;
}

uint8_t copyKindOf(uint8_t cuptiKind)
{
    switch (cuptiKind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
        return 1; // COPY_HTOD
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
        return 2; // COPY_DTOH
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
        return 3; // COPY_DTOD
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
        return 4; // COPY_HTOH
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
        return 5; // COPY_PTOP
    default:
        return 0;
    }
}

template <typename K> ActivityConverter::Result fillKernel(const K& k, GpuRecord& out)
{
    if (k.start == 0 && k.end == 0)
        return ActivityConverter::Result::NoTiming;
    out = GpuRecord();
    out.kind = GpuRecordKind::Kernel;
    out.start = int64_t(k.start);
    out.end = int64_t(k.end);
    out.correlation = k.correlationId;
    out.device = k.deviceId;
    out.context = k.contextId;
    out.stream = k.streamId;
    out.graphId = k.graphId;
    out.graphNodeId = k.graphNodeId;
    out.name = k.name;
    out.grid[0] = uint32_t(k.gridX);
    out.grid[1] = uint32_t(k.gridY);
    out.grid[2] = uint32_t(k.gridZ);
    out.block[0] = uint32_t(k.blockX);
    out.block[1] = uint32_t(k.blockY);
    out.block[2] = uint32_t(k.blockZ);
    out.registers = k.registersPerThread;
    out.sharedStatic = uint32_t(k.staticSharedMemory);
    out.sharedDynamic = uint32_t(k.dynamicSharedMemory);
    return ActivityConverter::Result::Converted;
}

template <typename M> ActivityConverter::Result fillMemcpy(const M& m, GpuRecord& out)
{
    if (m.start == 0 && m.end == 0)
        return ActivityConverter::Result::NoTiming;
    out = GpuRecord();
    out.kind = GpuRecordKind::Memcpy;
    out.copyKind = copyKindOf(m.copyKind);
    out.flags = (m.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? 1u : 0u;
    out.start = int64_t(m.start);
    out.end = int64_t(m.end);
    out.correlation = m.correlationId;
    out.device = m.deviceId;
    out.context = m.contextId;
    out.stream = m.streamId;
    out.bytes = m.bytes;
    out.graphId = m.graphId;
    out.graphNodeId = m.graphNodeId;
    return ActivityConverter::Result::Converted;
}

ActivityConverter::Result fillMemset(const CUpti_ActivityMemset4& m, GpuRecord& out)
{
    if (m.start == 0 && m.end == 0)
        return ActivityConverter::Result::NoTiming;
    out = GpuRecord();
    out.kind = GpuRecordKind::Memset;
    out.flags = (m.flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) ? 1u : 0u;
    out.start = int64_t(m.start);
    out.end = int64_t(m.end);
    out.correlation = m.correlationId;
    out.device = m.deviceId;
    out.context = m.contextId;
    out.stream = m.streamId;
    out.bytes = m.bytes;
    out.graphId = m.graphId;
    out.graphNodeId = m.graphNodeId;
    return ActivityConverter::Result::Converted;
}

// A whole graph replay (CUPTI_ACTIVITY_KIND_GRAPH_TRACE): one kernel event, wholegraph.h. Every layout
// starts with the fields of CUpti_ActivityGraphTrace (GraphTrace2 of CUDA 12.8+ appends end ids).
ActivityConverter::Result fillGraphTrace(const CUpti_ActivityGraphTrace& g, GpuRecord& out)
{
    if (g.start == 0 && g.end == 0)
        return ActivityConverter::Result::NoTiming;
    out = wholeReplayRecord(
        int64_t(g.start), int64_t(g.end), g.correlationId, g.deviceId, g.contextId, g.streamId, g.graphId);
    return ActivityConverter::Result::Converted;
}

ActivityConverter::Result fillApi(const CUpti_ActivityAPI& a, uint8_t domain, GpuRecord& out)
{
    out = GpuRecord();
    out.kind = GpuRecordKind::Api;
    out.apiDomain = domain;
    out.start = int64_t(a.start);
    out.end = int64_t(a.end);
    out.correlation = a.correlationId;
    out.cbid = a.cbid;
    out.stream = a.threadId;
    out.pid = a.processId;
    return ActivityConverter::Result::Converted;
}

template <typename S> ActivityConverter::Result fillSync(const S& s, GpuRecord& out)
{
    out = GpuRecord();
    out.kind = GpuRecordKind::Sync;
    out.syncKind = uint8_t(s.type <= 4 ? s.type : 0);
    out.start = int64_t(s.start);
    out.end = int64_t(s.end);
    out.correlation = s.correlationId;
    out.context = s.contextId;
    out.stream = s.streamId == uint32_t(-1) ? 0 : s.streamId;
    return ActivityConverter::Result::Converted;
}

} // namespace

const char* toString(CuptiLayout layout)
{
    switch (layout) {
    case CuptiLayout::Cuda118To126:
        return "CUDA 11.8-12.6 (Kernel9, Memcpy5, Memset4, Synchronization)";
    case CuptiLayout::Cuda128To129:
        return "CUDA 12.8-12.9 (Kernel9, Memcpy6, Memset4, Synchronization2)";
    case CuptiLayout::Cuda130:
        return "CUDA 13.0 (Kernel10, Memcpy6, Memset4, Synchronization2)";
    case CuptiLayout::Unknown:
        break;
    }
    return "unknown";
}

CuptiLayout layoutForCuptiVersion(uint32_t v)
{
    if (v >= 18 && v <= 25)
        return CuptiLayout::Cuda118To126;
    if (v >= 26 && v <= 28)
        return CuptiLayout::Cuda128To129;
    if (v >= 130000 && v <= 130099)
        return CuptiLayout::Cuda130;
    return CuptiLayout::Unknown;
}

std::string knownCuptiVersions()
{
    return "18-25 (CUDA 11.8-12.6), 26-28 (CUDA 12.8-12.9), 130000-130099 (CUDA 13.0)";
}

ActivityConverter::ActivityConverter(CuptiLayout layout)
    : m_layout(layout)
{
}

ActivityConverter::Result ActivityConverter::convert(const void* rec, GpuRecord& out) const
{
    if (!rec || m_layout == CuptiLayout::Unknown)
        return Result::Skipped;
    const auto* record = static_cast<const CUpti_Activity*>(rec);
    const bool v13 = m_layout == CuptiLayout::Cuda130;
    const bool v128 = m_layout != CuptiLayout::Cuda118To126;
    switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return v13 ? fillKernel(load<CUpti_ActivityKernel10>(record), out)
                   : fillKernel(load<CUpti_ActivityKernel9>(record), out);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return v128 ? fillMemcpy(load<CUpti_ActivityMemcpy6>(record), out)
                    : fillMemcpy(load<CUpti_ActivityMemcpy5>(record), out);
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return fillMemset(load<CUpti_ActivityMemset4>(record), out);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
        return fillApi(load<CUpti_ActivityAPI>(record), 0, out);
    case CUPTI_ACTIVITY_KIND_DRIVER:
        return fillApi(load<CUpti_ActivityAPI>(record), 1, out);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        return v128 ? fillSync(load<CUpti_ActivitySynchronization2>(record), out)
                    : fillSync(load<CUpti_ActivitySynchronization>(record), out);
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
        return fillGraphTrace(load<CUpti_ActivityGraphTrace>(record), out);
    default:
        return Result::Skipped;
    }
}

GpuRecord wholeReplayRecord(int64_t start, int64_t end, uint32_t correlation, uint32_t device, uint32_t context,
    uint32_t stream, uint64_t graphId)
{
    GpuRecord out;
    out.kind = GpuRecordKind::Kernel;
    out.start = start;
    out.end = end;
    out.correlation = correlation;
    out.device = device;
    out.context = context;
    out.stream = stream;
    out.graphId = graphId;
    out.graphNodeId = format::kWholeGraphNode;
    out.name = format::kWholeGraphName;
    return out;
}

} // namespace gapscope::capture::inject
