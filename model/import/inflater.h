// SPDX-License-Identifier: MIT
#pragma once

// Inflater: one gzip member's deflate stream at a time, for GzipByteSource, which owns the file, the
// input buffer, member boundaries, truncation and the errors' wording. Two behind it: ISA-L's igzip
// (about 2.4x less CPU than zlib on a real-looking trace; each member's CRC and size checked) and
// zlib (the fallback when ISA-L is absent at configure time, or GAPSCOPE_IMPORT_INFLATE=zlib).
// Threading: one thread at a time.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace gapscope::model::importer {

class Inflater {
public:
    struct Step {
        size_t consumed = 0; // input bytes taken
        size_t produced = 0; // output bytes written
        bool memberEnd = false; // the member's trailer was read (and checked)
        std::string error; // corrupt data: what is wrong (empty: none)
    };
    virtual ~Inflater() = default;
    // Inflates from in[0, inLen) into out[0, outLen). inLen may be 0 (output still pending).
    virtual Step inflate(const uint8_t* in, size_t inLen, uint8_t* out, size_t outLen) = 0;
    // Starts the next member of a concatenated stream.
    virtual void nextMember() = 0;

    // Null when the build lacks the library.
    static std::unique_ptr<Inflater> zlib();
    static std::unique_ptr<Inflater> isal();
};

} // namespace gapscope::model::importer
