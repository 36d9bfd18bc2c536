// SPDX-License-Identifier: MIT
// libFuzzer target for ChunkParser against protobuf: on any bytes, parse() must succeed or fail
// exactly when ParseFromArray does and give the same message (serialized byte for byte). Without
// kernel configs it must give the same message less the kernel block's config and graph columns.
#include "model/format/chunkparser.h"

#include <cstdint>
#include <string>

using namespace gapscope;

namespace {

void dropConfigs(pb::Chunk& c)
{
    if (!c.has_kernels())
        return;
    c.mutable_kernels()->clear_config();
    c.mutable_kernels()->clear_graph_id();
    c.mutable_kernels()->clear_graph_node_delta();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const char* bytes = reinterpret_cast<const char*>(data);
    pb::Chunk expect, fast, lean;
    const bool ok = expect.ParseFromArray(bytes, int(size));
    if (format::ChunkParser::parse(bytes, size, fast) != ok)
        __builtin_trap();
    if (ok && fast.SerializeAsString() != expect.SerializeAsString())
        __builtin_trap();
    if (format::ChunkParser::parse(bytes, size, lean, false) != ok)
        __builtin_trap();
    if (ok) {
        dropConfigs(expect);
        dropConfigs(lean);
        if (lean.SerializeAsString() != expect.SerializeAsString())
            __builtin_trap();
    }
    return 0;
}
