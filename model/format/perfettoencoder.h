// SPDX-License-Identifier: MIT
#pragma once

// PerfettoEncoder: writes Perfetto trace packets (perfetto_trace_subset.proto) into a byte buffer,
// each as one length-delimited field 1 of `Trace`, so that any concatenation of such buffers is a
// valid Perfetto trace. The model's Perfetto export drives it; no model type appears here.
//
// Track events, the bulk of a trace, are encoded by hand (field numbers taken from the generated
// code's k...FieldNumber constants, so the .proto stays the one source of truth): an event is built
// field by field between beginEvent() and endEvent(), with the interned data it introduces, and no
// message object is allocated. Rare packets (track descriptors, clock snapshots, sequence starts)
// go through the generated classes.
//
// compress() turns a buffer of packets into packets holding them zstd-compressed
// (TracePacket.zstd_compressed_packets), each below Perfetto's 512 KiB limit.
//
// Threading: one encoder per thread; an encoder appends to the buffer it was given.

#include "model/base/status.h"
#include "model/format/bytebuffer.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace gapscope::format {

class ZstdCompressor;

class PerfettoEncoder {
public:
    enum class EventType : uint8_t { SliceBegin = 1, SliceEnd = 2, Instant = 3, Counter = 4 };
    static constexpr uint32_t kStateCleared = 1; // TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
    static constexpr uint32_t kNeedsState = 2; // TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
    static constexpr uint32_t kClockRealtime = 1; // BUILTIN_CLOCK_REALTIME
    static constexpr uint32_t kClockBoottime = 6; // BUILTIN_CLOCK_BOOTTIME
    static constexpr uint32_t kFirstSequenceClock = 64; // clock ids 64..127 are sequence-scoped

    explicit PerfettoEncoder(ByteBuffer& out)
        : m_out(out)
    {
    }

    // --- one track event ---
    void beginEvent(uint64_t timestamp, EventType type);
    void trackUuid(uint64_t uuid);
    void nameIid(uint64_t iid);
    void name(std::string_view name);
    void categoryIid(uint64_t iid);
    void argUint(uint64_t nameIid, uint64_t value);
    void argInt(uint64_t nameIid, int64_t value);
    void argStringIid(uint64_t nameIid, uint64_t valueIid);
    void argString(uint64_t nameIid, std::string_view value);
    void flow(uint64_t id);
    void terminatingFlow(uint64_t id);
    void counterValue(int64_t value);
    // Interned data introduced by this packet.
    void internEventName(uint64_t iid, std::string_view name);
    void internCategory(uint64_t iid, std::string_view name);
    void internArgName(uint64_t iid, std::string_view name);
    void internArgString(uint64_t iid, std::string_view value);
    // Finishes the packet. `clockId` 0: the sequence's default clock.
    void endEvent(uint32_t sequence, uint32_t flags, uint32_t clockId = 0);

    // --- other packets ---
    // Starts (or restarts) sequence `sequence`: clears its incremental state, sets its defaults
    // (timestamps on `clockId`, events on `trackUuid`) and, when `clockId` is a sequence clock,
    // declares it incremental and equal to `referenceClock` at `start`: the next packet's timestamp
    // is then a delta from `start`. `first`: the sequence's first packet in the file.
    void startSequence(uint32_t sequence, uint64_t trackUuid, uint32_t clockId, uint32_t referenceClock, uint64_t start,
        bool first = true);
    // A track: a process track when `pid` > 0 (named `name`), else a child of `parent`.
    void trackDescriptor(uint64_t uuid, uint64_t parent, std::string_view name, int32_t pid, bool counter = false);
    // The trace's clock: `clock` is the primary trace clock, and equal to BOOTTIME at `timestamp`.
    // Written as the first packet of `sequence`.
    void primaryClock(uint32_t sequence, uint32_t clock, uint64_t timestamp);

    // Packs the packets in `raw` into `out` (appended) as zstd-compressed packets; false (with the
    // error) when compression fails.
    static Status compress(std::string_view raw, ZstdCompressor& zstd, ByteBuffer& out, std::string& scratch);
    // Largest raw size compress() packs into one compressed packet.
    static constexpr size_t kMaxRawChunk = 448 * 1024;

private:
    void appendPacket(std::string_view body);
    ByteBuffer& m_out;
    ByteBuffer m_event; // TrackEvent body
    ByteBuffer m_interned; // InternedData body
    ByteBuffer m_packet; // TracePacket body
    uint64_t m_timestamp = 0;
};

} // namespace gapscope::format
