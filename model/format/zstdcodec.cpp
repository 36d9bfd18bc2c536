// SPDX-License-Identifier: MIT
#include "model/format/zstdcodec.h"

#include <algorithm>
#include <zstd.h>

namespace gapscope::format {

ZstdCompressor::ZstdCompressor(int level)
    : m_ctx(ZSTD_createCCtx())
    , m_level(level)
{
}

ZstdCompressor::~ZstdCompressor()
{
    ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(m_ctx));
}

Status ZstdCompressor::compress(const void* data, size_t size, std::string& out)
{
    if (!m_ctx)
        return Status::error("zstd: out of memory");
    out.resize(ZSTD_compressBound(size));
    size_t n = ZSTD_compressCCtx(static_cast<ZSTD_CCtx*>(m_ctx), out.data(), out.size(), data, size, m_level);
    if (ZSTD_isError(n))
        return Status::error(std::string("zstd: ") + ZSTD_getErrorName(n));
    out.resize(n);
    return Status::ok();
}

ZstdDecompressor::ZstdDecompressor()
    : m_ctx(ZSTD_createDCtx())
{
}

ZstdDecompressor::~ZstdDecompressor()
{
    ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(m_ctx));
}

Status ZstdDecompressor::decompress(const void* data, size_t size, size_t rawSize, std::string& out)
{
    if (!m_ctx)
        return Status::error("zstd: out of memory");
    auto* ctx = static_cast<ZSTD_DCtx*>(m_ctx);
    unsigned long long declared = ZSTD_getFrameContentSize(data, size);
    if (declared == ZSTD_CONTENTSIZE_ERROR)
        return Status::error("payload is not zstd data");
    if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != rawSize)
        return Status::error(
            "zstd frame size " + std::to_string(declared) + " != raw length " + std::to_string(rawSize));
    // Streamed into a buffer that grows with what is actually produced, capped at rawSize: a length
    // that lies costs what the data really holds, never what it claims.
    ZSTD_DCtx_reset(ctx, ZSTD_reset_session_only);
    ZSTD_inBuffer in { data, size, 0 };
    size_t produced = 0;
    out.resize(std::min(rawSize, std::max<size_t>(size * 4, 64 << 10)));
    for (;;) {
        ZSTD_outBuffer ob { out.data(), out.size(), produced };
        size_t r = ZSTD_decompressStream(ctx, &ob, &in);
        if (ZSTD_isError(r))
            return Status::error(std::string("zstd: ") + ZSTD_getErrorName(r));
        produced = ob.pos;
        if (r == 0)
            break; // end of the zstd frame
        if (produced < out.size() && in.pos == in.size)
            return Status::error("zstd data cut short after " + std::to_string(produced) + " bytes");
        if (produced == out.size()) {
            if (out.size() == rawSize) {
                // Full: only a frame that ends exactly here is whole.
                char extra;
                ZSTD_outBuffer probe { &extra, 1, 0 };
                r = ZSTD_decompressStream(ctx, &probe, &in);
                if (ZSTD_isError(r) || probe.pos != 0)
                    return Status::error("decompresses to more than its raw length " + std::to_string(rawSize));
                if (r == 0)
                    break;
                return Status::error("zstd data cut short after " + std::to_string(produced) + " bytes");
            }
            out.resize(std::min(rawSize, out.size() * 2));
        }
    }
    if (in.pos != in.size)
        return Status::error("trailing bytes after the zstd data");
    if (produced != rawSize)
        return Status::error(
            "decompressed " + std::to_string(produced) + " bytes, expected " + std::to_string(rawSize));
    out.resize(produced);
    return Status::ok();
}

Status ZstdDecompressor::decompressAll(const void* data, size_t size, size_t maxSize, std::string& out)
{
    if (!m_ctx)
        return Status::error("zstd: out of memory");
    auto* ctx = static_cast<ZSTD_DCtx*>(m_ctx);
    ZSTD_DCtx_reset(ctx, ZSTD_reset_session_only);
    ZSTD_inBuffer in { data, size, 0 };
    size_t produced = 0;
    size_t r = 1;
    out.resize(std::min(maxSize, std::max<size_t>(size * 4, 64 << 10)));
    while (in.pos < in.size || r != 0) {
        if (produced == out.size()) {
            if (out.size() >= maxSize)
                return Status::error("zstd data decompresses to more than " + std::to_string(maxSize) + " bytes");
            out.resize(std::min(maxSize, out.size() * 2));
        }
        ZSTD_outBuffer ob { out.data(), out.size(), produced };
        const size_t before = in.pos;
        r = ZSTD_decompressStream(ctx, &ob, &in);
        if (ZSTD_isError(r))
            return Status::error(std::string("zstd: ") + ZSTD_getErrorName(r));
        const bool progress = ob.pos != produced || in.pos != before;
        produced = ob.pos;
        if (r != 0 && in.pos == in.size && produced < out.size() && !progress)
            return Status::error("zstd data cut short after " + std::to_string(produced) + " bytes");
    }
    out.resize(produced);
    return Status::ok();
}

} // namespace gapscope::format
