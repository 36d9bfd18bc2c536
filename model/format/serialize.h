// SPDX-License-Identifier: MIT
#pragma once

// Deterministic protobuf serialization: map fields in key order, so the same message always gives
// the same bytes (files written twice from the same data are identical; tests compare bytes).

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/message.h>

#include <string>

namespace gapscope::format {

inline void serializeDeterministic(const google::protobuf::Message& message, std::string& out)
{
    out.clear();
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
}

inline std::string serializeDeterministic(const google::protobuf::Message& message)
{
    std::string out;
    serializeDeterministic(message, out);
    return out;
}

} // namespace gapscope::format
