// SPDX-License-Identifier: MIT
#pragma once

// PerfettoDecoder: decodes one Perfetto TracePacket (perfetto_trace_subset.proto, Perfetto's own field
// numbers) into PerfettoPacket, a plain value the importer reads, so that no protobuf type leaves
// model/format. What it keeps: the timestamp and its clock, the sequence id and flags, the packet
// defaults, interned names (event names, categories, argument names, argument string values), a track
// event (type, track, name, categories, counter value, simple debug annotations), a track descriptor
// (uuid, parent, name, process, thread, counter), a clock snapshot, and the payload of a compressed
// packet (deflate or zstd). Everything else in a packet is left unread.
//
// A packet that does not parse as a TracePacket makes decode() return false; the caller decides what
// that means (the reader counts it and goes on). Threading: one decoder per thread (it reuses one
// protobuf message across packets).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gapscope::format {

struct PerfettoPacket {
    enum class Data : uint8_t { Other, TrackEvent, TrackDescriptor, ClockSnapshot, Deflate, Zstd };
    struct Interned {
        uint64_t iid = 0;
        std::string text;
    };
    struct Arg {
        enum class Type : uint8_t { None, Bool, Uint, Int, Double, String, StringIid };
        uint64_t nameIid = 0; // 0: the name is `name`
        std::string name;
        Type type = Type::None;
        uint64_t uintValue = 0; // Bool, Uint, StringIid
        int64_t intValue = 0;
        double doubleValue = 0;
        std::string stringValue;
    };
    struct Event {
        uint32_t type = 0; // TrackEvent.Type: 1 begin, 2 end, 3 instant, 4 counter
        bool hasTrack = false;
        uint64_t track = 0;
        uint64_t nameIid = 0; // 0: the name is `name` (empty: none)
        std::string name;
        std::vector<uint64_t> categoryIids;
        std::vector<std::string> categories;
        bool hasCounter = false;
        double counter = 0;
        std::vector<Arg> args;
    };
    struct Track {
        uint64_t uuid = 0;
        uint64_t parent = 0;
        std::string name;
        bool isProcess = false, isThread = false, isCounter = false;
        int32_t pid = 0;
        int64_t tid = 0;
        std::string processName, threadName;
    };
    struct Clock {
        uint32_t id = 0;
        uint64_t timestamp = 0;
        bool incremental = false;
        uint64_t unitNs = 1;
    };

    Data data = Data::Other;
    bool hasTimestamp = false;
    uint64_t timestamp = 0;
    uint32_t clockId = 0; // 0: the sequence's default clock
    uint32_t sequence = 0;
    uint32_t flags = 0; // SequenceFlags; incremental_state_cleared folded in
    bool hasDefaults = false;
    uint32_t defaultClock = 0;
    bool hasDefaultTrack = false;
    uint64_t defaultTrack = 0;
    std::vector<Interned> eventNames, categories, argNames, argStrings;
    Event event;
    Track track;
    std::vector<Clock> clocks;
    uint32_t primaryClock = 0; // 0: the snapshot does not set one
    std::string payload; // Deflate / Zstd: the compressed packets
};

class PerfettoDecoder {
public:
    static constexpr uint32_t kStateCleared = 1; // SEQ_INCREMENTAL_STATE_CLEARED
    static constexpr uint32_t kNeedsState = 2; // SEQ_NEEDS_INCREMENTAL_STATE
    static constexpr uint32_t kClockBoottime = 6;
    static constexpr uint32_t kClockRealtime = 1;
    static constexpr uint32_t kFirstSequenceClock = 64;

    PerfettoDecoder();
    ~PerfettoDecoder();
    PerfettoDecoder(const PerfettoDecoder&) = delete;
    PerfettoDecoder& operator=(const PerfettoDecoder&) = delete;

    // Decodes the TracePacket in data[0, size) into `out` (reset first); false when it does not parse.
    bool decode(const char* data, size_t size, PerfettoPacket& out);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace gapscope::format
