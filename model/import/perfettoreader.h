// SPDX-License-Identifier: MIT
#pragma once

// PerfettoReader: reads a Perfetto protobuf trace (.pftrace, .perfetto-trace, .pb; plain or gzip) into a
// StagedTrace, the source "perfetto": what gapscope's own Perfetto export writes, and track-event traces
// of other writers (Perfetto's SDK).
//
// Algorithm: the file is a `Trace`, a run of field-1 length-delimited TracePackets; they are framed one
// at a time from a 1 MiB window with bounds checks, each decoded on its own by format::PerfettoDecoder
// (real protobuf). compressed_packets (deflate) and zstd_compressed_packets hold more packets, read the
// same way. Per trusted_packet_sequence_id the reader keeps the incremental state: interned event
// names, categories, argument names and string values, the packet defaults (clock, track), and
// sequence-scoped clocks; SEQ_INCREMENTAL_STATE_CLEARED resets it, and a packet with
// SEQ_NEEDS_INCREMENTAL_STATE on a sequence that was never cleared is dropped and counted. Times are
// converted to the trace's primary clock (BOOTTIME unless a ClockSnapshot names another) through the
// clock snapshots; sequence clocks may be incremental (deltas). Slices (BEGIN/END per track, INSTANT
// as zero-length) are collected per track and mapped once the file is read, when every
// TrackDescriptor is known (perfettotracks.h says how).
//
// Errors: a packet that does not parse, or a compressed packet that does not decompress, is skipped
// with a warning naming its byte offset (import_bad_events), the packets around it kept; a length that
// runs past the end of the file ends the read there (import_truncated). A file without any slice on a
// GPU track fails: "Perfetto trace: N packets, no GPU tracks/slices: nothing to import".
//
// Threading: one reader per thread.

#include "model/import/bytesource.h"
#include "model/import/stagedtrace.h"

#include <functional>
#include <memory>
#include <string>

namespace gapscope::model::importer {

class PerfettoReader {
public:
    struct Options {
        size_t windowBytes = 1u << 20;
        size_t maxPacketBytes = 256u << 20; // one packet (or decompressed block) larger is an error
        std::function<bool(uint64_t fileBytesRead)> progress; // return false to cancel
    };

    PerfettoReader(ByteSource& source, StagedTrace& out, Options options);
    PerfettoReader(ByteSource& source, StagedTrace& out);
    ~PerfettoReader();
    Status read();
    // True when `head` (the first n bytes of the decompressed file) starts with a Trace.packet record
    // (tag 0x0a) whose contents are TracePacket fields: the whole packet parses when it fits in `head`.
    static bool looksLikePerfetto(const char* head, size_t n);

private:
    Status finish();
    struct State;
    std::unique_ptr<State> m_state;
    ByteSource& m_source;
    StagedTrace& m_out;
    Options m_options;
};

} // namespace gapscope::model::importer
