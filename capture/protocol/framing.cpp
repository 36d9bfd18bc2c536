// SPDX-License-Identifier: MIT
#include "capture/protocol/framing.h"

#include <google/protobuf/message_lite.h>

namespace gapscope::capture {

Status appendFrame(const google::protobuf::MessageLite& msg, std::string& out, uint32_t maxBytes)
{
    const size_t size = msg.ByteSizeLong();
    if (size > maxBytes)
        return Status::error(msg.GetTypeName() + ": " + std::to_string(size) + " bytes exceed the frame limit of "
            + std::to_string(maxBytes));
    const size_t at = out.size();
    out.resize(at + kFrameHeaderBytes + size);
    putU32LE(&out[at], uint32_t(size));
    if (size > 0 && !msg.SerializeToArray(&out[at + kFrameHeaderBytes], int(size))) {
        out.resize(at);
        return Status::error(msg.GetTypeName() + ": serialization failed");
    }
    return Status::ok();
}

Status parseFrame(std::string_view payload, google::protobuf::MessageLite& msg, std::string_view what)
{
    if (!msg.ParseFromArray(payload.data(), int(payload.size())))
        return Status::error(std::string(what) + ": malformed " + msg.GetTypeName() + " message ("
            + std::to_string(payload.size()) + " bytes)");
    return Status::ok();
}

} // namespace gapscope::capture
