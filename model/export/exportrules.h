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
//     memop sizes, collective details, NVTX depth), named by ArgKey;
//   - where a GPU stream's work goes when it overlaps without nesting (OverlapLayout): a kernel that
//     starts before the previous one on its stream has ended (programmatic dependent launch) would be
//     cut or dropped by viewers that need slices on a track to nest (Perfetto), so it goes to an
//     extra track of the lane ("... (overlapping 1)"), with its real times.
// Pure functions of a finished Trace; thread-safe.

#include "model/trace/trace.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gapscope::model {

// [first, last) of the lane's events an export of [from, to) looks at; check each with isExported().
std::pair<size_t, size_t> exportedRange(const LaneEvents& events, TimeNs from, TimeNs to);
inline bool isExported(const LaneEvents& events, size_t i, TimeNs from)
{
    return events.end(i) > from || events.duration(i) == 0;
}

// The window [from, to) of steps first..last (inclusive) over every rank; false when no rank has any.
bool stepWindow(const Trace& trace, int64_t first, int64_t last, TimeNs& from, TimeNs& to);

// Places the events of one GPU stream lane, in start order, on tracks so that none overlaps another
// on the same track: track 0 is the lane's own, track k > 0 its k-th overlap track; each event takes
// the lowest track free at its start. Beyond kMaxTracks tracks (never seen: a stream runs a kernel or
// two at once) an event goes on the track that frees first and place() says it must be clamped to
// that track's end (nested). GPU lanes only: host ranges nest on their own.
class OverlapLayout {
public:
    static constexpr uint32_t kMaxTracks = 64;
    struct Place {
        uint32_t track = 0;
        bool clamp = false; // nest inside the track's open slice: end at min(end, that slice's end)
        TimeNs clampEnd = 0;
    };
    Place place(TimeNs start, TimeNs end);
    uint32_t tracks() const { return uint32_t(m_ends.size()); } // tracks used so far (at least 1)
    static bool applies(const LaneInfo& info) { return info.kind == LaneKind::GpuStream; }

private:
    std::vector<TimeNs> m_ends { INT64_MIN }; // per track: end of its last slice
};
std::string overlapTrackTitle(const LaneInfo& info, uint32_t track); // "<lane title> (overlapping k)"

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
