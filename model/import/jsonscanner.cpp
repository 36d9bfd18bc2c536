// SPDX-License-Identifier: MIT
#include "model/import/jsonscanner.h"

#include <cstring>

namespace gapscope::model::importer {

namespace {
constexpr size_t kMaxDepth = 1024;

inline bool isSpace(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

inline bool endsScalar(char c)
{
    return isSpace(c) || c == ',' || c == ']' || c == '}' || c == ':';
}
} // namespace

void JsonScanner::reset()
{
    m_stack.clear();
    m_started = m_inString = m_escape = m_inScalar = m_topString = false;
    m_error = nullptr;
}

size_t JsonScanner::skipWhitespace(const char* data, size_t pos, size_t n)
{
    while (pos < n && isSpace(data[pos]))
        ++pos;
    return pos;
}

bool JsonScanner::nextElement(const char* data, size_t from, size_t n, size_t& next)
{
    enum { Other, AfterClose, AfterComma, InCandidate } state = AfterComma; // `from` may follow a comma
    int depth = 0, minDepth = 0;
    size_t candidate = 0;
    bool inString = false, escape = false;
    for (size_t i = from; i < n; ++i) {
        const char c = data[i];
        if (inString) {
            if (escape)
                escape = false;
            else if (c == '\\')
                escape = true;
            else if (c == '"')
                inString = false;
            continue;
        }
        if (isSpace(c))
            continue;
        const bool atMin = depth == minDepth;
        if (c == '{' || c == '[') {
            if (atMin && state != InCandidate) {
                state = c == '{' && state != Other ? InCandidate : Other;
                candidate = i;
            }
            ++depth;
        } else if (c == '}' || c == ']') {
            --depth;
            if (depth < minDepth) {
                minDepth = depth;
                state = AfterClose;
            } else if (depth == minDepth && state == InCandidate) {
                next = candidate;
                return true;
            }
        } else if (atMin && state != InCandidate) {
            state = c == ',' && state == AfterClose ? AfterComma : Other;
            inString = c == '"';
        } else {
            inString = c == '"';
        }
    }
    return false;
}

size_t JsonScanner::repairUtf8(char* data, size_t n, bool& cutTail)
{
    cutTail = false;
    size_t replaced = 0;
    auto* p = reinterpret_cast<unsigned char*>(data);
    size_t i = 0;
    while (i < n) {
        const unsigned char c = p[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        size_t len = 0;
        uint32_t cp = 0;
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            cp = c & 0x07;
        }
        bool ok = len > 0;
        size_t k = 1;
        for (; ok && k < len; ++k) {
            if (i + k >= n) { // the data ends inside the sequence
                cutTail = true;
                return replaced;
            }
            ok = (p[i + k] & 0xC0) == 0x80;
            cp = (cp << 6) | (p[i + k] & 0x3F);
        }
        if (ok) // reject overlong forms, surrogates and values past U+10FFFF
            ok = !(len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)))
                && !(len == 4 && (cp < 0x10000 || cp > 0x10FFFF));
        if (ok) {
            i += len;
            continue;
        }
        p[i++] = '?';
        ++replaced;
    }
    return replaced;
}

namespace {

// The code unit of a \uXXXX escape at data[i] (the backslash), or -1.
int32_t escapedUnit(const char* data, size_t i, size_t n)
{
    if (i + 6 > n || data[i] != '\\' || data[i + 1] != 'u')
        return -1;
    int32_t v = 0;
    for (size_t k = i + 2; k < i + 6; ++k) {
        const char c = data[k];
        const int d = c >= '0' && c <= '9' ? c - '0'
            : c >= 'a' && c <= 'f'         ? c - 'a' + 10
            : c >= 'A' && c <= 'F'         ? c - 'A' + 10
                                           : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

} // namespace

size_t JsonScanner::repairSurrogates(char* data, size_t n)
{
    size_t replaced = 0;
    for (size_t i = 0; i < n;) {
        const void* hit = std::memchr(data + i, '\\', n - i);
        if (!hit)
            break;
        i = size_t(static_cast<const char*>(hit) - data);
        const int32_t u = escapedUnit(data, i, n);
        if (u < 0xD800 || u > 0xDFFF) { // not a surrogate (or not \u): skip the escaped character
            i += 2;
            continue;
        }
        if (u <= 0xDBFF) {
            if (i + 6 >= n || (data[i + 6] == '\\' && i + 12 > n))
                break; // its partner may lie past the data
            const int32_t low = escapedUnit(data, i + 6, n);
            if (low >= 0xDC00 && low <= 0xDFFF) {
                i += 12;
                continue;
            }
        }
        std::memcpy(data + i + 2, "fffd", 4);
        ++replaced;
        i += 6;
    }
    return replaced;
}

JsonScanner::State JsonScanner::feed(const char* data, size_t n, size_t& used, bool atEnd)
{
    size_t i = 0;
    if (!m_started) {
        i = skipWhitespace(data, 0, n);
        if (i == n) {
            used = n;
            return State::NeedMore;
        }
        m_started = true;
        const char c = data[i];
        if (c == '"') {
            m_inString = m_topString = true;
            ++i;
        } else if (c == '{' || c == '[') {
            m_stack.push_back(c);
            ++i;
        } else if (c == '}' || c == ']' || c == ',' || c == ':') {
            used = i;
            m_error = "expected a JSON value";
            return State::Invalid;
        } else {
            m_inScalar = true;
        }
    }
    if (m_inScalar) { // a number or literal at the top level: runs until a delimiter
        while (i < n && !endsScalar(data[i]))
            ++i;
        if (i == n && !atEnd) {
            used = n;
            return State::NeedMore;
        }
        m_inScalar = false;
        used = i;
        return State::Complete;
    }
    for (; i < n; ++i) {
        const char c = data[i];
        if (m_inString) {
            if (m_escape)
                m_escape = false;
            else if (c == '\\')
                m_escape = true;
            else if (c == '"') {
                m_inString = false;
                if (m_topString) {
                    used = i + 1;
                    return State::Complete;
                }
            }
            continue;
        }
        if (c == '"') {
            m_inString = true;
        } else if (c == '{' || c == '[') {
            if (m_stack.size() >= kMaxDepth) {
                used = i;
                m_error = "nesting deeper than 1024 levels";
                return State::Invalid;
            }
            m_stack.push_back(c);
        } else if (c == '}' || c == ']') {
            if (m_stack.empty() || (c == '}') != (m_stack.back() == '{')) {
                used = i;
                m_error = c == '}' ? "unexpected '}'" : "unexpected ']'";
                return State::Invalid;
            }
            m_stack.pop_back();
            if (m_stack.empty()) {
                used = i + 1;
                return State::Complete;
            }
        }
    }
    used = n;
    return State::NeedMore;
}

} // namespace gapscope::model::importer
