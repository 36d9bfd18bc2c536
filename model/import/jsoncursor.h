// SPDX-License-Identifier: MIT
#pragma once

// JsonCursor: walks a JSON document streamed through a JsonWindow, one value at a time, for readers
// whose big arrays sit deep inside objects (rocprofv3's results.json: rocprofiler-sdk-tool[] ->
// buffer_records -> kernel_dispatch[]). It enters objects and arrays, hands out member keys and element
// boundaries, and brings one value whole into the window (for simdjson to parse in place) or skips it
// (JsonScanner finds where each value ends). Memory is the window plus the largest value brought in,
// whatever the document's size.
//
// Errors: malformed JSON is an error naming the byte offset (of the decompressed stream for .gz) and
// what was expected. A stream that ends early is not an error: truncated() becomes true with where it
// ended, and from then on nextMember()/nextElement() return false and value() 0, so a reader unwinds
// keeping what it read.
//
// Invariants: enter() and nextMember()/nextElement() nest like the document. Threading: one thread.

#include "model/import/bytesource.h"
#include "model/import/jsonwindow.h"

#include <functional>
#include <string>
#include <vector>

namespace gapscope::model::importer {

class JsonCursor {
public:
    JsonCursor(ByteSource& source, JsonWindow& window);

    // The next non-blank byte, left in the window (0 at the end of the stream; a UTF-8 byte order mark
    // at the start is skipped).
    Expected<char> peek();
    // Enters the object ('{') or array ('[') that comes next; an error naming `what` when the next value
    // is something else.
    Status enter(char open, const std::string& what);
    // The next member of the object entered last, its key in `key`: false after the object's '}'.
    Expected<bool> nextMember(std::string& key);
    // The next element of the array entered last: false after the array's ']'.
    Expected<bool> nextElement();
    // Calls `each(key)` for every member of the object entered last, or `each()` for every element of the
    // array entered last; `each` consumes the value (skip(), value(), enter()). Stops at the first error,
    // at the closing bracket, or where the stream ends.
    Status forEachMember(const std::function<Status(const std::string&)>& each);
    Status forEachElement(const std::function<Status()>& each);
    // Brings the next value whole into the window: its `n` bytes are data()[0, n) with at least
    // JsonWindow::kPadding writable bytes after them; consume(n) once done. 0 when the stream ends first.
    // A value larger than `limit` is an error.
    Expected<size_t> value(size_t limit);
    // Skips the next value; `seen`, when given, gets its bytes as they pass (in pieces).
    Status skip(const std::function<void(const char*, size_t)>& seen = nullptr);

    char* data() { return m_window.data(); }
    size_t capacity() { return m_window.capacityFrom(m_window.data()); }
    void consume(size_t n) { m_window.consume(n); }
    uint64_t offset() const { return m_window.offset(); }

    bool truncated() const { return m_truncated; }
    const std::string& truncation() const { return m_truncation; } // what the stream ended inside
    // "path: byte N" (of the decompressed data, for gzip).
    std::string where(uint64_t offset) const;
    Status malformed(uint64_t offset, const std::string& what) const;

private:
    struct Level {
        char close; // '}' or ']'
        bool first = true;
    };
    Expected<bool> next(char close, const char* what);
    void truncate(uint64_t offset, const std::string& inside);

    ByteSource& m_source;
    JsonWindow& m_window;
    std::vector<Level> m_levels;
    bool m_truncated = false;
    bool m_started = false;
    std::string m_truncation;
};

} // namespace gapscope::model::importer
