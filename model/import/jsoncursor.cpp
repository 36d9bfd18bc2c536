// SPDX-License-Identifier: MIT
#include "model/import/jsoncursor.h"

#include "model/import/jsonscanner.h"

#include <algorithm>
#include <cstring>

namespace gapscope::model::importer {

JsonCursor::JsonCursor(ByteSource& source, JsonWindow& window)
    : m_source(source)
    , m_window(window)
{
}

std::string JsonCursor::where(uint64_t offset) const
{
    return m_source.path() + ": byte " + std::to_string(offset)
        + (m_source.compressed() ? " of the decompressed data" : "");
}

Status JsonCursor::malformed(uint64_t offset, const std::string& what) const
{
    return Status::error(where(offset) + ": malformed JSON: " + what);
}

void JsonCursor::truncate(uint64_t offset, const std::string& inside)
{
    if (m_truncated)
        return;
    m_truncated = true;
    m_truncation = where(offset) + ": the file ends inside " + inside;
}

Expected<char> JsonCursor::peek()
{
    for (;;) {
        size_t i = JsonScanner::skipWhitespace(m_window.data(), 0, m_window.size());
        if (!m_started && i == 0 && m_window.size() >= 3 && std::memcmp(m_window.data(), "\xEF\xBB\xBF", 3) == 0)
            i = 3;
        m_window.consume(i);
        if (m_window.size() > 0) {
            m_started = true;
            return m_window.data()[0];
        }
        if (m_window.eof())
            return char(0);
        if (Status st = m_window.fill(); !st)
            return st;
    }
}

Status JsonCursor::enter(char open, const std::string& what)
{
    auto c = peek();
    if (!c)
        return c.status();
    if (*c == 0) {
        truncate(m_window.offset(), what);
        return Status::ok();
    }
    if (*c != open)
        return Status::error(
            where(m_window.offset()) + ": " + what + " is not " + (open == '{' ? "an object" : "an array"));
    m_window.consume(1);
    m_levels.push_back({ open == '{' ? '}' : ']' });
    return Status::ok();
}

// Past the separator before the next item of the innermost level: false at its closing bracket (consumed).
Expected<bool> JsonCursor::next(char close, const char* what)
{
    if (m_truncated || m_levels.empty() || m_levels.back().close != close)
        return false;
    auto c = peek();
    if (!c)
        return c.status();
    if (*c == 0) {
        truncate(m_window.offset(), what);
        return false;
    }
    Level& level = m_levels.back();
    if (*c == close) {
        m_window.consume(1);
        m_levels.pop_back();
        return false;
    }
    if (!level.first) {
        if (*c != ',')
            return malformed(m_window.offset(), std::string("expected ',' or '") + close + "' in " + what);
        m_window.consume(1);
    }
    level.first = false;
    return true;
}

Expected<bool> JsonCursor::nextMember(std::string& key)
{
    auto more = next('}', "an object");
    if (!more || !*more)
        return more;
    auto c = peek();
    if (!c)
        return c.status();
    if (*c != '"' && *c != 0)
        return malformed(m_window.offset(), "expected a quoted key");
    constexpr size_t kMaxKeyBytes = 4096;
    auto n = value(kMaxKeyBytes);
    if (!n || *n == 0)
        return n ? Expected<bool>(false) : Expected<bool>(n.status());
    if (*n < 2 || m_window.data()[0] != '"') // a NUL byte in the data where the key should start
        return malformed(m_window.offset(), "expected a quoted key");
    key.assign(m_window.data() + 1, *n - 2); // keys are read as written: no escapes in the names looked for
    m_window.consume(*n);
    c = peek();
    if (!c)
        return c.status();
    if (*c != ':') {
        if (*c == 0) {
            truncate(m_window.offset(), "an object");
            return false;
        }
        return malformed(m_window.offset(), "expected ':' after a key");
    }
    m_window.consume(1);
    return true;
}

Expected<bool> JsonCursor::nextElement()
{
    return next(']', "an array");
}

Status JsonCursor::forEachMember(const std::function<Status(const std::string&)>& each)
{
    std::string key;
    for (;;) {
        auto more = nextMember(key);
        if (!more || !*more)
            return more.status();
        if (Status st = each(key); !st)
            return st;
    }
}

Status JsonCursor::forEachElement(const std::function<Status()>& each)
{
    for (;;) {
        auto more = nextElement();
        if (!more || !*more)
            return more.status();
        if (Status st = each(); !st)
            return st;
    }
}

Expected<size_t> JsonCursor::value(size_t limit)
{
    if (m_truncated)
        return size_t(0);
    JsonScanner scanner;
    size_t scanned = 0;
    for (;;) {
        if (scanned == m_window.size()) {
            if (m_window.eof()) {
                truncate(m_window.offset(), "the value that starts there");
                return size_t(0);
            }
            // Refill; past a window's worth, double (a value larger than the window).
            const size_t want = std::max(m_window.windowBytes(), m_window.size() * 2);
            if (Status st = m_window.fill(want); !st)
                return st;
            continue;
        }
        size_t used = 0;
        const auto state = scanner.feed(m_window.data() + scanned, m_window.size() - scanned, used, m_window.eof());
        if (state == JsonScanner::State::Invalid)
            return malformed(m_window.offset() + scanned + used, scanner.error());
        scanned += used;
        if (state == JsonScanner::State::Complete)
            return scanned;
        if (scanned > limit)
            return Status::error(
                where(m_window.offset()) + ": a value larger than " + std::to_string(limit >> 20) + " MiB, not read");
    }
}

Status JsonCursor::skip(const std::function<void(const char*, size_t)>& seen)
{
    if (m_truncated)
        return Status::ok();
    JsonScanner scanner;
    const uint64_t start = m_window.offset();
    for (;;) {
        if (m_window.size() == 0 && !m_window.eof())
            if (Status st = m_window.fill(); !st)
                return st;
        size_t used = 0;
        const auto state = scanner.feed(m_window.data(), m_window.size(), used, m_window.eof());
        if (seen)
            seen(m_window.data(), used);
        if (state == JsonScanner::State::Invalid)
            return malformed(m_window.offset() + used, scanner.error());
        m_window.consume(used);
        if (state == JsonScanner::State::Complete)
            return Status::ok();
        if (m_window.eof()) {
            truncate(start, "the value that starts there");
            return Status::ok();
        }
    }
}

} // namespace gapscope::model::importer
