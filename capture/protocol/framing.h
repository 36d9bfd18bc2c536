// SPDX-License-Identifier: MIT
#pragma once

// Framing of the capture protocol (protocol.proto): every message is a u32 little-endian payload
// length followed by the serialized envelope. These helpers encode one frame and parse a payload
// into an envelope with a clear error; FrameDecoder splits a byte stream into payloads.
//
// Limits are hard: a receiver closes the connection on a frame above its limit before reading the
// payload, so a peer cannot make it allocate more than the limit.

#include "model/base/status.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace google::protobuf {
class MessageLite;
}

namespace gapscope::capture {

constexpr uint32_t kProtocolVersion = 1;
constexpr uint16_t kDefaultAgentPort = 7433;

// Rank -> agent frames carry one Chunk each (the injection library keeps them below 4 MiB).
constexpr uint32_t kMaxRankFrameBytes = 16u << 20;
// Before a rank connection's Register has been accepted (Register itself is a few hundred bytes).
constexpr uint32_t kMaxRankRegisterFrameBytes = 64u << 10;
// Agent <-> client frames after the handshake (StreamChunk, FileData of at most kFileDataPiece).
constexpr uint32_t kMaxClientFrameBytes = 32u << 20;
// Before a client's Hello has been accepted: nothing large may arrive from an unauthenticated peer.
constexpr uint32_t kMaxHandshakeFrameBytes = 64u << 10;
constexpr uint32_t kFileDataPiece = 1u << 20;
constexpr size_t kFrameHeaderBytes = 4;

// Appends length + serialized `msg` to `out`. Fails when the message exceeds `maxBytes`.
Status appendFrame(const google::protobuf::MessageLite& msg, std::string& out, uint32_t maxBytes);

// Parses one payload into `msg` ("what" names the peer for the error text).
Status parseFrame(std::string_view payload, google::protobuf::MessageLite& msg, std::string_view what);

inline void putU32LE(char* p, uint32_t v)
{
    p[0] = char(v & 0xff);
    p[1] = char((v >> 8) & 0xff);
    p[2] = char((v >> 16) & 0xff);
    p[3] = char((v >> 24) & 0xff);
}

inline uint32_t getU32LE(const char* p)
{
    const auto* u = reinterpret_cast<const unsigned char*>(p);
    return uint32_t(u[0]) | (uint32_t(u[1]) << 8) | (uint32_t(u[2]) << 16) | (uint32_t(u[3]) << 24);
}

} // namespace gapscope::capture
