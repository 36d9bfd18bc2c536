// SPDX-License-Identifier: MIT
#pragma once

// What fuzz targets make of their bytes: little-endian fields and short strings taken in turn (for
// targets that feed rows to a converter directly), and a temporary file holding them (for readers that
// open a path, such as SQLite's).

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <unistd.h>

namespace gapscope::fuzz {

struct FuzzBytes {
    const uint8_t* p;
    size_t n;
    // The next 8 bytes (fewer at the end, zero-filled) as a number.
    int64_t next()
    {
        int64_t v = 0;
        const size_t k = n < 8 ? n : 8;
        std::memcpy(&v, p, k);
        p += k;
        n -= k;
        return v;
    }
    // The next 12 bytes (fewer at the end) as text.
    std::string text()
    {
        const size_t k = n < 12 ? n : 12;
        std::string s(reinterpret_cast<const char*>(p), k);
        p += k;
        n -= k;
        return s;
    }
};

// Writes the bytes to a temporary file, calls `read(path)` and removes the file; false when the file
// could not be written or `read` says so.
inline bool readAsFile(const uint8_t* data, size_t size, const std::function<bool(const char*)>& read)
{
    char path[] = "/tmp/gapscope-fuzz-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0)
        return false;
    const bool written = write(fd, data, size) == ssize_t(size);
    close(fd);
    const bool ok = written && read(path);
    unlink(path);
    return ok;
}

} // namespace gapscope::fuzz
