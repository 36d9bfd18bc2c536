// SPDX-License-Identifier: MIT
#include "model/format/zstdcodec.h"

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
    unsigned long long declared = ZSTD_getFrameContentSize(data, size);
    if (declared == ZSTD_CONTENTSIZE_ERROR)
        return Status::error("payload is not zstd data");
    if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != rawSize)
        return Status::error(
            "zstd frame size " + std::to_string(declared) + " != raw length " + std::to_string(rawSize));
    out.resize(rawSize);
    size_t n = ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(m_ctx), out.data(), rawSize, data, size);
    if (ZSTD_isError(n))
        return Status::error(std::string("zstd: ") + ZSTD_getErrorName(n));
    if (n != rawSize)
        return Status::error("decompressed " + std::to_string(n) + " bytes, expected " + std::to_string(rawSize));
    return Status::ok();
}

} // namespace gapscope::format
