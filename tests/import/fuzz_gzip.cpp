// SPDX-License-Identifier: MIT
// libFuzzer target: arbitrary bytes as a .json.gz file, read to its end through the importers'
// ByteSource with each inflater the build has (ISA-L and zlib). Must never crash, hang or leak; errors
// are values. Differential: when both read the whole stream without error or truncation, they must
// give the same bytes.
#include "model/import/bytesource.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

using namespace gapscope::model::importer;

namespace {

struct Result {
    bool ok = false;
    bool truncated = false;
    std::string bytes;
};

Result readAll(const std::string& path, const char* inflater)
{
    if (inflater)
        setenv("GAPSCOPE_IMPORT_INFLATE", inflater, 1);
    else
        unsetenv("GAPSCOPE_IMPORT_INFLATE");
    Result r;
    auto src = ByteSource::open(path);
    if (!src)
        return r;
    char buf[4096];
    for (;;) {
        auto n = (*src)->read(buf, sizeof buf);
        if (!n)
            return r;
        if (*n == 0)
            break;
        if (r.bytes.size() < (64u << 20)) // a small input may inflate to a lot: keep what we compare bounded
            r.bytes.append(buf, *n);
    }
    r.ok = true;
    r.truncated = (*src)->truncated();
    return r;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    static const std::string path = [] {
        char name[] = "/tmp/fuzz_gzip_XXXXXX";
        const int fd = mkstemp(name);
        if (fd >= 0)
            close(fd);
        return std::string(name);
    }();
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f)
        return 0;
    std::string bytes = "\x1f\x8b"; // always gzip, so the inflaters (not the plain file reader) see it
    bytes.append(reinterpret_cast<const char*>(data), size);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
    const Result fast = readAll(path, nullptr);
    const Result zlib = readAll(path, "zlib");
    if (fast.ok && zlib.ok && !fast.truncated && !zlib.truncated && fast.bytes != zlib.bytes)
        std::abort(); // the two inflaters disagree on a stream both read whole
    return 0;
}
