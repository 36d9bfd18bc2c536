// SPDX-License-Identifier: MIT
#pragma once

// JsonScanner: a small scalar JSON tokenizer used where speed does not matter: it finds where one
// JSON value ends (tracking strings, escapes and bracket nesting), resumably across buffer refills.
// The Kineto reader uses it for the top-level object (keys and small metadata values), to skip large
// values it does not need, and to tell a truncated event (needs more bytes) from a malformed one (the
// value is complete but does not parse). The fast path over traceEvents is simdjson's.
//
// Invariants: feed() consumes bytes in order; once Complete or Invalid, reset() before reuse.
// Threading: one thread at a time.

#include <cstddef>
#include <cstdint>
#include <string>

namespace gapscope::model::importer {

class JsonScanner {
public:
    enum class State { NeedMore, Complete, Invalid };

    void reset();
    // Scans data[0, n) as the continuation of the current value. Returns Complete with `used` = bytes
    // up to and including the value's last byte, NeedMore with used = n, or Invalid with used = the
    // offending byte. A scalar at the very end of the data needs more bytes (it might continue), unless
    // `atEnd` says the input ends there.
    State feed(const char* data, size_t n, size_t& used, bool atEnd = false);
    const char* error() const { return m_error; }

    static size_t skipWhitespace(const char* data, size_t pos, size_t n);
    // From `from` - a position outside any string, inside an element of an array of objects or between
    // two of them - finds where the next element of that array starts (`next`), confirmed by scanning
    // that element to its end at the same depth. False when data[from, n) does not hold it whole, when
    // the array closes first, or when no array-of-objects level shows up. A heuristic that never has to
    // be right: the Kineto reader verifies every boundary it takes from here.
    static bool nextElement(const char* data, size_t from, size_t n, size_t& next);
    // Replaces each byte of an invalid UTF-8 sequence in data[0, n) by '?' and returns how many were
    // replaced. A sequence cut short by the end of the data is left alone and reported in `cutTail`.
    static size_t repairUtf8(char* data, size_t n, bool& cutTail);
    // Replaces, in place, each \u escape of a lone UTF-16 surrogate in data[0, n) (a high one not
    // followed by a low one, or a low one alone: what Python's json.dumps writes for broken text) by
    // \ufffd, and returns how many were replaced. data[0] must be outside any string. A high
    // surrogate whose partner would lie past n is left alone.
    static size_t repairSurrogates(char* data, size_t n);

private:
    std::string m_stack; // open brackets
    bool m_started = false;
    bool m_inString = false;
    bool m_escape = false;
    bool m_inScalar = false;
    bool m_topString = false;
    const char* m_error = nullptr;
};

} // namespace gapscope::model::importer
