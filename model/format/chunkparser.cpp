// SPDX-License-Identifier: MIT
#include "model/format/chunkparser.h"

#include <google/protobuf/io/coded_stream.h>

#include <climits>
#include <cstdint>
#include <cstring>

namespace gapscope::format {

namespace {

using Bytes = const uint8_t*;

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "packedVarints() reads eight bytes at a time, low byte first");

// Merges the whole fields in [p, end) into `m`, as protobuf would parse them.
bool mergeBytes(Bytes p, Bytes end, google::protobuf::MessageLite& m)
{
    google::protobuf::io::CodedInputStream in(p, int(end - p));
    return m.MergeFromCodedStream(&in) && in.ConsumedEntireMessage();
}

// The varint at p (at most ten bytes, none past end). False when it is cut or holds more than 64 bits.
bool readVarint(Bytes& p, Bytes end, uint64_t& v)
{
    v = 0;
    for (int shift = 0; shift < 64 && p < end; shift += 7) {
        const uint8_t b = *p++;
        v |= uint64_t(b & 0x7f) << shift;
        if (!(b & 0x80))
            return shift < 63 || b <= 1;
    }
    return false;
}

// Moves p past one field value of wire type `wire`. Groups and unknown types are left to protobuf.
bool skipValue(Bytes& p, Bytes end, uint64_t wire)
{
    uint64_t v;
    switch (wire) {
    case 0:
        return readVarint(p, end, v);
    case 1:
    case 5: {
        const size_t n = wire == 1 ? 8 : 4;
        if (size_t(end - p) < n)
            return false;
        p += n;
        return true;
    }
    case 2:
        if (!readVarint(p, end, v) || v > uint64_t(end - p))
            return false;
        p += v;
        return true;
    default:
        return false;
    }
}

// Appends the packed varints of [p, end) to `out` (zigzag-decoded when Zig), sized once. The last
// byte ends a varint, so every varint ends inside the range; false when one is longer than 64 bits.
template <typename T, bool Zig> bool appendPacked(Bytes p, Bytes end, google::protobuf::RepeatedField<T>& out)
{
    if (p == end)
        return true;
    if (end[-1] & 0x80)
        return false;
    size_t n = 0;
    for (Bytes q = p; q < end; ++q)
        n += (*q & 0x80) == 0;
    if (n > size_t(INT_MAX - out.size()))
        return false;
    out.Reserve(out.size() + int(n));
    T* dst = out.AddNAlreadyReserved(int(n));
    while (p < end) {
        uint64_t b = *p++, v = b;
        if (b & 0x80) {
            v &= 0x7f;
            for (int shift = 7; (b & 0x80) && shift < 63; shift += 7) {
                b = *p++;
                v |= (b & 0x7f) << shift;
            }
            if (b & 0x80) { // the tenth byte may only hold bit 63
                b = *p++;
                if (b > 1)
                    return false;
                v |= b << 63;
            }
        }
        *dst++ = T(Zig ? (v >> 1) ^ (~(v & 1) + 1) : v);
    }
    return true;
}

// True when [p, end) is packed varints of at most nine bytes each (read or not, a column must
// parse as protobuf would; a ten-byte one is left to protobuf). Eight bytes a step: a varint of ten
// bytes or more is a run of at least nine bytes with the high bit set, so it crosses a step's edge.
bool packedVarints(Bytes p, Bytes end)
{
    if (p == end)
        return true;
    if (end[-1] & 0x80)
        return false;
    unsigned run = 0; // bytes with the high bit set just before p
    for (; end - p >= 8; p += 8) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        const uint64_t stops = ~w & 0x8080808080808080ull; // the bytes that end a varint
        if (!stops) {
            if ((run += 8) >= 9)
                return false;
            continue;
        }
        if (run + unsigned(__builtin_ctzll(stops) >> 3) >= 9)
            return false;
        run = unsigned(__builtin_clzll(stops) >> 3);
    }
    for (; p < end; ++p)
        if ((run = (*p & 0x80) ? run + 1 : 0) >= 9)
            return false;
    return true;
}

// Calls f(number, from, to) for each field of [p, end), all length-delimited (packed columns or
// messages). False when one is of another wire type, is cut, or f refuses it.
template <typename F> bool forEachPacked(Bytes p, Bytes end, F&& f)
{
    while (p < end) {
        uint64_t tag, len;
        if (!readVarint(p, end, tag) || (tag & 7) != 2 || !readVarint(p, end, len) || len > uint64_t(end - p))
            return false;
        const Bytes from = p;
        p += len;
        if (!f(tag >> 3, from, p))
            return false;
    }
    return true;
}

bool fastColumns(Bytes p, Bytes end, pb::Columns& c)
{
    return forEachPacked(p, end, [&c](uint64_t number, Bytes from, Bytes to) {
        switch (number) {
        case 1: return appendPacked<uint32_t, false>(from, to, *c.mutable_lane());
        case 2: return appendPacked<int64_t, true>(from, to, *c.mutable_start_delta());
        case 3: return appendPacked<uint64_t, false>(from, to, *c.mutable_duration());
        case 4: return appendPacked<uint32_t, false>(from, to, *c.mutable_name());
        case 5: return appendPacked<int64_t, true>(from, to, *c.mutable_correlation_delta());
        case 6: return appendPacked<int64_t, true>(from, to, *c.mutable_start_gap());
        case 7: return appendPacked<int64_t, true>(from, to, *c.mutable_duration_delta());
        default: return false;
        }
    });
}

// Without configs, their columns are only checked (packedVarints).
bool fastKernels(Bytes p, Bytes end, pb::KernelBlock& k, bool configs)
{
    return forEachPacked(p, end, [&k, configs](uint64_t number, Bytes from, Bytes to) {
        switch (number) {
        case 1: return fastColumns(from, to, *k.mutable_c());
        case 2: return configs ? appendPacked<uint32_t, false>(from, to, *k.mutable_config()) : packedVarints(from, to);
        case 3: return configs ? appendPacked<uint64_t, false>(from, to, *k.mutable_graph_id()) : packedVarints(from, to);
        case 4:
            return configs ? appendPacked<int64_t, true>(from, to, *k.mutable_graph_node_delta())
                           : packedVarints(from, to);
        default: return false;
        }
    });
}

} // namespace

bool ChunkParser::parse(const char* data, size_t size, pb::Chunk& chunk, bool kernelConfigs)
{
    auto whole = [&] {
        chunk.Clear();
        return size <= size_t(INT_MAX) && chunk.ParseFromArray(data, int(size));
    };
    chunk.Clear();
    if (size > size_t(INT_MAX))
        return false;
    const Bytes begin = reinterpret_cast<Bytes>(data), end = begin + size;
    Bytes p = begin, run = begin; // [run, field): other fields, merged by protobuf in one call
    auto flush = [&](Bytes to) {
        const bool ok = run == to || mergeBytes(run, to, chunk);
        run = to;
        return ok;
    };
    while (p < end) {
        const Bytes field = p;
        uint64_t tag, len;
        if (!readVarint(p, end, tag) || tag > UINT32_MAX || (tag >> 3) == 0)
            return whole();
        if (tag != ((7u << 3) | 2u)) {
            if (!skipValue(p, end, tag & 7))
                return whole();
            continue;
        }
        if (!readVarint(p, end, len) || len > uint64_t(end - p))
            return whole();
        if (!flush(field))
            return false;
        if (!fastKernels(p, p + len, *chunk.mutable_kernels(), kernelConfigs))
            return whole(); // rare: protobuf parses the chunk, so its result and failures are the rule
        p += len;
        run = p;
    }
    return flush(end);
}

} // namespace gapscope::format
