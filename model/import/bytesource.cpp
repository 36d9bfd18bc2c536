// SPDX-License-Identifier: MIT
#include "model/import/bytesource.h"

#include "model/import/filebytesource.h"
#if defined(GAPSCOPE_HAVE_ZLIB) || defined(GAPSCOPE_HAVE_ISAL)
#include "model/import/gzipbytesource.h"
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gapscope::model::importer {

bool ByteSource::isGzip(const std::string& path)
{
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f)
        return false;
    unsigned char magic[2] = { 0, 0 };
    const size_t n = std::fread(magic, 1, 2, f);
    std::fclose(f);
    return n == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

Expected<std::unique_ptr<ByteSource>> ByteSource::open(const std::string& path)
{
    if (!isGzip(path))
        return FileByteSource::open(path);
#ifdef GAPSCOPE_HAVE_ISAL
    // GAPSCOPE_IMPORT_INFLATE=zlib picks the fallback (benchmarks and tests compare the two).
    const char* inflater = std::getenv("GAPSCOPE_IMPORT_INFLATE");
    if (!inflater || std::strcmp(inflater, "zlib") != 0)
        return GzipByteSource::open(path, Inflater::isal());
#endif
#ifdef GAPSCOPE_HAVE_ZLIB
    return GzipByteSource::open(path, Inflater::zlib());
#else
    return Status::error(path + ": gzip-compressed, but this build has no zlib (install zlib1g-dev and rebuild)");
#endif
}

} // namespace gapscope::model::importer
