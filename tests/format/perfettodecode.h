// SPDX-License-Identifier: MIT
#pragma once

// PerfettoDecode: reads a Perfetto trace written by the export back with the generated classes of
// model/format/perfetto_trace_subset.proto (the protobuf library's parser, not the export's hand
// encoder), replaying what a Perfetto reader does: zstd-compressed packets expanded, per sequence
// the interned tables (reset on SEQ_INCREMENTAL_STATE_CLEARED), the defaults and the incremental
// clock, and BEGIN/END pairs matched per track into slices. Everything a reader would reject or
// misread becomes a line in `problems`. Test helper.

#include "model/base/status.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gapscope::testing {

struct DecodedSlice {
    uint64_t track = 0;
    uint64_t start = 0, end = 0; // absolute ns on the primary clock
    std::string name, category;
    std::map<std::string, std::string> args; // values as text
    std::vector<uint64_t> flows, terminatingFlows;
    bool instant = false;
};

struct DecodedTrack {
    uint64_t uuid = 0, parent = 0;
    std::string name;
    int32_t pid = 0;
};

struct DecodedTrace {
    std::map<uint64_t, DecodedTrack> tracks;
    std::vector<DecodedSlice> slices; // in the order their BEGIN (or instant) was read
    std::vector<std::string> problems;
    uint64_t packets = 0; // after expanding compressed ones
    uint64_t compressedPackets = 0;
    size_t largestCompressedPacket = 0;
    int primaryClock = 0;
    std::string text; // every packet in protobuf text format (when asked)
};

Expected<DecodedTrace> decodePerfetto(const std::string& bytes, bool withText = false);
std::string readFile(const std::string& path);

} // namespace gapscope::testing
