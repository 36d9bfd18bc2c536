// SPDX-License-Identifier: MIT
#pragma once

// ChunkParser: parses a serialized pb::Chunk with the same result as protobuf's ParseFromArray, faster.
//
// The kernel block holds almost all of a chunk's bytes, as packed varint columns. protobuf decodes
// them one Add() at a time, growing (and copying) each column as it goes. Here the chunk's top-level
// fields are scanned: the runs of other fields are merged by protobuf itself, and each kernel block
// (field 7) has its packed columns counted (one pass over the bytes: a varint ends at each byte
// below 0x80) and decoded straight into columns sized once.
//
// Anything the fast path does not expect (an unknown or unpacked field in the kernel block, a
// ten-byte varint, a damaged tag or length at the top level) hands the whole chunk to protobuf's
// ParseFromArray, so the message, the unknown fields and the failures are the ones ParseFromArray gives. A fuzz
// target (tests/fuzz/fuzz_chunkparser.cpp) compares the two on any input.
//
// Stateless; safe to call from several threads on different messages.

#include "model/format/trace.pb.h"

#include <cstddef>

namespace gapscope::format {

class ChunkParser {
public:
    // Replaces `chunk` with the message in [data, data + size). False when it does not parse.
    // Without kernelConfigs, the kernel block's config, graph_id and graph_node_delta columns are
    // left empty when the fast path takes the block, for readers that never use them. They are still
    // checked to be varints, so the parse succeeds or fails exactly as with them.
    static bool parse(const char* data, size_t size, pb::Chunk& chunk, bool kernelConfigs = true);
};

} // namespace gapscope::format
