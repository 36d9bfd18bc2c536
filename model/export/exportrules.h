// SPDX-License-Identifier: MIT
#pragma once

// The rules every trace export follows (Chrome JSON, Perfetto protobuf), declared once so that the
// formats agree on what they show:
//   - the window of a step range (stepWindow()), and which events of a lane an export covers for a
//     time window [from, to) (exportedRange(),
//     isExported()): the events overlapping it; an event ending exactly at `from` is left out unless
//     it has no duration;
//   - display names: a rank's title ("rank N · host · GPU"), a lane's title ("GPU " + stream name
//     for streams), an event's name (memory ops and syncs get a fixed name: their trace name is a
//     copy kind or API name already shown elsewhere);
//   - the arguments of an event (visitEventArgs(): correlation id, launch configuration, graph ids,
//     memop sizes, collective details, NVTX depth), named by ArgKey.
// Pure functions of a finished Trace; thread-safe.

#include "model/trace.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

namespace gapscope::model {

// [first, last) of the lane's events an export of [from, to) looks at; check each with isExported().
std::pair<size_t, size_t> exportedRange(const LaneEvents& events, TimeNs from, TimeNs to);
inline bool isExported(const LaneEvents& events, size_t i, TimeNs from)
{
    return events.end(i) > from || events.duration(i) == 0;
}

// The window [from, to) of steps first..last (inclusive) over every rank; false when no rank has any.
bool stepWindow(const Trace& trace, int64_t first, int64_t last, TimeNs& from, TimeNs& to);

std::string rankTitle(const Trace& trace, uint32_t rank);
std::string laneTitle(const LaneInfo& info);
std::string_view exportedName(const Trace& trace, const Lane& lane, size_t index);

// The fixed names exportedName() gives some kinds of events instead of their trace name.
enum class FixedName : uint8_t { None, Memcpy, Memset, Synchronization, Count };
FixedName fixedNameOf(EventKind kind);
const char* fixedNameText(FixedName name);

// Argument keys, in the order visitEventArgs() reports them.
enum class ArgKey : uint8_t {
    Correlation,
    Grid,
    Block,
    Registers,
    SharedMemory,
    GraphId,
    GraphNodeId,
    Bytes,
    CopyKind,
    Sequence,
    Datatype,
    Algorithm,
    Protocol,
    Depth,
    Count // not a key: the number of keys
};
const char* argName(ArgKey key);

// Receives the arguments of one event.
class EventArgSink {
public:
    virtual ~EventArgSink() = default;
    virtual void uintArg(ArgKey key, uint64_t value) = 0;
    // A 3-vector of a kernel configuration; `config` indexes Trace::kernelConfigs().
    virtual void dimArg(ArgKey key, const uint32_t (&xyz)[3], uint32_t config) = 0;
    virtual void stringArg(ArgKey key, StringId value) = 0;
};

// Reports the arguments of event `index` of `lane`; returns how many it reported.
int visitEventArgs(const Trace& trace, const Lane& lane, size_t index, EventArgSink& sink);

// Creates `path`, runs `write(FILE*)` (returning an Expected) on it and closes it; a failure to create, to
// write or to close is an error naming the path.
template <typename Write>
auto writeExportFile(const std::string& path, Write write) -> decltype(write(static_cast<std::FILE*>(nullptr)))
{
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f)
        return Status::error(path + ": cannot create: " + std::strerror(errno));
    auto r = write(f);
    if (std::fclose(f) != 0 && r)
        return Status::error(path + ": write failed: " + std::strerror(errno));
    if (!r)
        return r.status().withContext(path);
    return r;
}

} // namespace gapscope::model
