// SPDX-License-Identifier: MIT
#include "model/analysis/patternmatcher.h"

#include <algorithm>
#include <cstring>
#include <regex>

#if __has_include(<regex.h>)
#include <regex.h>
#define GAPSCOPE_HAVE_POSIX_REGEX 1
#endif

namespace gapscope::model {

struct PatternMatcher::Ecma {
    std::regex re;
};

#ifdef GAPSCOPE_HAVE_POSIX_REGEX
struct PatternMatcher::Posix {
    regex_t re {};
    bool compiled = false;
    Posix() = default;
    Posix(const Posix&) = delete;
    Posix& operator=(const Posix&) = delete;
    ~Posix()
    {
        if (compiled)
            regfree(&re);
    }
};
#else
struct PatternMatcher::Posix { };
#endif

bool PatternMatcher::isPosixCompatible(std::string_view p)
{
    static const char kSafeEscapes[] = ".\\()[]{}*+?|^$-/";
    bool inBracket = false;
    char prev = 0; // previous unescaped character outside brackets (0 after an escape)
    for (size_t i = 0; i < p.size(); ++i) {
        char c = p[i];
        if (inBracket) {
            if (c == '\\')
                return false; // ECMAScript escapes inside brackets, ERE does not
            if (c == '[' && i + 1 < p.size() && (p[i + 1] == ':' || p[i + 1] == '=' || p[i + 1] == '.'))
                return false; // POSIX classes mean something else in ECMAScript
            if (c == ']')
                inBracket = false;
            prev = ']';
            continue;
        }
        if (c == '\\') {
            if (i + 1 >= p.size() || !std::strchr(kSafeEscapes, p[i + 1]))
                return false;
            ++i;
            prev = 0;
            continue;
        }
        if (c == '(' && i + 1 < p.size() && p[i + 1] == '?')
            return false; // (?: (?= (?!
        if (c == '?' && (prev == '*' || prev == '+' || prev == '?' || prev == '}'))
            return false; // lazy quantifier
        if (c == '[') {
            inBracket = true;
            size_t j = i + 1;
            if (j < p.size() && p[j] == '^')
                ++j;
            if (j < p.size() && p[j] == ']')
                return false; // "[]..." / "[^]": a literal ']' in ERE, an empty class in ECMAScript
            i = j - 1;
        }
        prev = c;
    }
    return !inBracket;
}

Expected<PatternMatcher> PatternMatcher::compile(const std::string& pattern)
{
    // std::regex compiles and matches recursively: bound what a table may ask of it.
    if (pattern.size() > kMaxPatternLength)
        return Status::error("regular expression longer than " + std::to_string(kMaxPatternLength) + " characters");
    int depth = 0, maxDepth = 0;
    for (size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] == '\\')
            ++i;
        else if (pattern[i] == '(')
            maxDepth = std::max(maxDepth, ++depth);
        else if (pattern[i] == ')')
            --depth;
    }
    if (maxDepth > kMaxGroupDepth)
        return Status::error("regular expression nests groups deeper than " + std::to_string(kMaxGroupDepth));
    PatternMatcher m;
    m.m_pattern = pattern;
    auto ecma = std::make_shared<Ecma>();
    try {
        // Always compiled: it validates the pattern with ECMAScript's rules.
        ecma->re = std::regex(pattern, std::regex::ECMAScript | std::regex::icase | std::regex::nosubs);
    } catch (const std::regex_error& e) {
        return Status::error(std::string("bad regular expression '") + pattern + "': " + e.what());
    }
#ifdef GAPSCOPE_HAVE_POSIX_REGEX
    if (isPosixCompatible(pattern)) {
        auto posix = std::make_shared<Posix>();
        posix->compiled = regcomp(&posix->re, pattern.c_str(), REG_EXTENDED | REG_ICASE | REG_NOSUB) == 0;
        if (posix->compiled) {
            m.m_posix = std::move(posix);
            return m;
        }
        // Not accepted by the C library: the ECMAScript engine handles it.
    }
#endif
    m.m_ecma = std::move(ecma);
    return m;
}

bool PatternMatcher::search(std::string_view text) const
{
#ifdef GAPSCOPE_HAVE_POSIX_REGEX
    if (m_posix) {
        // regexec needs a NUL-terminated string and a name may contain a NUL (then ERE would stop
        // there); names are classified once each, so the copy is cheap.
        std::string s(text);
        return regexec(&m_posix->re, s.c_str(), 0, nullptr, 0) == 0;
    }
#endif
    // libstdc++'s matcher recurses per character: names beyond kMaxTextLength are searched in
    // their first kMaxTextLength characters (real kernel names are far shorter).
    if (text.size() > kMaxTextLength)
        text = text.substr(0, kMaxTextLength);
    return m_ecma && std::regex_search(text.begin(), text.end(), m_ecma->re);
}

} // namespace gapscope::model
