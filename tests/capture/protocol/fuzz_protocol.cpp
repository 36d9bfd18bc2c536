// SPDX-License-Identifier: MIT
// libFuzzer target: decoding of capture protocol messages from an untrusted peer. The first byte
// picks the direction (client->agent, rank->agent, agent->client); the rest is a byte stream cut into
// frames by FrameDecoder (fed in two pieces to exercise partial frames) with the receiver's limits:
// a client's frames are held to the handshake limit until a Hello parses, a rank's to the Register
// limit until a Register parses; then the limits rise, as in the agent (the decoder gives its
// memory back between the pieces when idle, as the agent does under memory pressure; the larger
// limits are capped at 1 MiB here so a run stays cheap). Every parsed chunk goes
// through ChunkRemapper, as in the agent and the client, which must reject bad ids and columns
// without crashing or allocating without bound.
#include "capture/client/chunkremapper.h"
#include "capture/client/encodersink.h"
#include "capture/protocol/framedecoder.h"
#include "capture/protocol/framing.h"
#include "capture/protocol/protocol.pb.h"

#include <cstddef>
#include <cstdint>

using namespace gapscope;
using namespace gapscope::capture;

namespace {

const pb::Chunk* chunkOf(int direction, google::protobuf::Message& msg)
{
    if (direction == 1) {
        auto& m = static_cast<wire::RankToAgent&>(msg);
        return m.has_chunk() ? &m.chunk().chunk() : nullptr;
    }
    if (direction == 2) {
        auto& m = static_cast<wire::AgentToClient&>(msg);
        return m.has_chunk() ? &m.chunk().chunk() : nullptr;
    }
    return nullptr;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 2)
        return 0;
    const int direction = data[0] % 3;
    constexpr uint32_t kAfter = 1u << 20;
    const uint32_t first = direction == 0 ? kMaxHandshakeFrameBytes
        : direction == 1                  ? kMaxRankRegisterFrameBytes
                                          : kAfter;
    FrameDecoder dec(first);
    bool greeted = direction == 2;
    format::ChunkEncoder target;
    ChunkRemapper remap(target);
    EncoderSink sink(target);
    const size_t split = 1 + (size - 1) / 2;
    for (int part = 0; part < 2; ++part) {
        const size_t from = part == 0 ? 1 : split, to = part == 0 ? split : size;
        dec.releaseIdle();
        dec.append(reinterpret_cast<const char*>(data + from), to - from);
        std::string_view payload;
        for (;;) {
            const auto r = dec.next(payload);
            if (r != FrameDecoder::Result::Frame)
                break;
            wire::ClientToAgent c;
            wire::RankToAgent rk;
            wire::AgentToClient a;
            google::protobuf::Message* msg = direction == 0 ? static_cast<google::protobuf::Message*>(&c)
                : direction == 1                            ? static_cast<google::protobuf::Message*>(&rk)
                                                            : static_cast<google::protobuf::Message*>(&a);
            if (!parseFrame(payload, *msg, "fuzz").isOk())
                continue;
            if (!greeted && (direction == 0 ? c.has_hello() : rk.has_register_rank())) {
                greeted = true;
                dec.setLimit(kAfter);
            }
            if (const pb::Chunk* chunk = chunkOf(direction, *msg))
                (void)remap.apply(*chunk, sink);
            std::string re; // what we accepted must serialize again within the limit
            (void)appendFrame(*msg, re, dec.limit() * 2 + 64);
        }
    }
    if (target.pendingEvents() > 0) {
        pb::Chunk out;
        target.flush(out);
    }
    return 0;
}
