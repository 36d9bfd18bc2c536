// SPDX-License-Identifier: MIT
#include "model/base/patternmatcher.h"

#include <cctype>
#include <cstring>
#include <regex>
#include <vector>

#if __has_include(<regex.h>)
#include <regex.h>
#define GAPSCOPE_HAVE_POSIX_REGEX 1
#endif

namespace gapscope::model {

#ifdef GAPSCOPE_HAVE_POSIX_REGEX
struct PatternMatcher::Engine {
    regex_t re {};
    bool compiled = false;
    Engine() = default;
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;
    ~Engine()
    {
        if (compiled)
            regfree(&re);
    }
};
#else
struct PatternMatcher::Engine {
    std::regex re;
};
#endif

namespace {

// ECMAScript -> POSIX ERE, for a yes/no search (see the header).
class EreTranslator {
public:
    explicit EreTranslator(std::string_view p)
        : m_p(p)
    {
    }
    Expected<std::string> run();

private:
    struct Group {
        bool counted = false; // a counted repetition inside
    };
    Status escape();
    Status bracket();
    Status group();
    Status counted();
    void literal(char c);
    void skipLazy()
    {
        if (m_i < m_p.size() && m_p[m_i] == '?')
            ++m_i;
    }

    std::string_view m_p;
    size_t m_i = 0;
    std::string m_out;
    std::vector<Group> m_groups;
    bool m_lastGroupCounted = false; // the last atom was a group holding a counted repetition
    bool m_afterQuantifier = false; // the last token was a quantifier ("a++" repeats a repetition)
    bool m_afterGroup = false; // the last token closed a group
    int m_repeatedGroups = 0; // groups with a quantifier: each may copy the group in the C engine
    // Checks a quantifier about to be written: not stacked on another, and few repeated groups
    // (glibc's regcomp copies a repeated group's tree, so nested ones grow exponentially).
    Status quantifier()
    {
        if (m_afterQuantifier)
            return Status::error("a quantifier after a quantifier (nothing to repeat)");
        if (m_afterGroup && ++m_repeatedGroups > kMaxRepeatedGroups)
            return Status::error("more than " + std::to_string(kMaxRepeatedGroups) + " repeated groups");
        return Status::ok();
    }
    static constexpr int kMaxRepeatedGroups = 6;
};

void EreTranslator::literal(char c)
{
    if (std::strchr(".[]()*+?{}|^$\\", c) && c != '\0') {
        m_out += '\\';
    }
    m_out += c;
}

Status EreTranslator::escape()
{
    if (m_i + 1 >= m_p.size())
        return Status::error("pattern ends with a backslash");
    char c = m_p[m_i + 1];
    m_i += 2;
    switch (c) {
    case 'd':
        m_out += "[0-9]";
        return Status::ok();
    case 'D':
        m_out += "[^0-9]";
        return Status::ok();
    case 'w':
        m_out += "[[:alnum:]_]";
        return Status::ok();
    case 'W':
        m_out += "[^[:alnum:]_]";
        return Status::ok();
    case 's':
        m_out += "[[:space:]]";
        return Status::ok();
    case 'S':
        m_out += "[^[:space:]]";
        return Status::ok();
    case 'b':
        m_out += "\\b";
        return Status::ok();
    case 'B':
        m_out += "\\B";
        return Status::ok();
    case 't':
        literal('\t');
        return Status::ok();
    case 'n':
        literal('\n');
        return Status::ok();
    case 'r':
        literal('\r');
        return Status::ok();
    case 'f':
        literal('\f');
        return Status::ok();
    case 'v':
        literal('\v');
        return Status::ok();
    case 'x': {
        if (m_i + 2 > m_p.size() || !std::isxdigit((unsigned char)m_p[m_i])
            || !std::isxdigit((unsigned char)m_p[m_i + 1]))
            return Status::error("\\x needs two hex digits");
        char v = char(std::stoi(std::string(m_p.substr(m_i, 2)), nullptr, 16));
        m_i += 2;
        if (v == '\0')
            return Status::error("\\x00 (NUL) is not supported");
        literal(v);
        return Status::ok();
    }
    default:
        break;
    }
    if (c >= '0' && c <= '9')
        return Status::error("back-references and \\0 are not supported");
    if (std::strchr("cukpP", c))
        return Status::error(std::string("\\") + c + " is not supported");
    literal(c); // an escaped punctuation character (or identity escape) stands for itself
    return Status::ok();
}

Status EreTranslator::bracket()
{
    ++m_i; // '['
    bool negate = false, rbracket = false, dash = false, caret = false;
    std::string body;
    if (m_i < m_p.size() && m_p[m_i] == '^') {
        negate = true;
        ++m_i;
    }
    if (m_i < m_p.size() && m_p[m_i] == ']')
        return Status::error("empty character class [] is not supported");
    while (true) {
        if (m_i >= m_p.size())
            return Status::error("unterminated character class");
        char c = m_p[m_i];
        if (c == ']') {
            ++m_i;
            break;
        }
        if (c == '[' && m_i + 1 < m_p.size() && std::strchr(":.=", m_p[m_i + 1]))
            return Status::error("POSIX classes like [:alpha:] are not ECMAScript: write the characters");
        if (c != '\\') {
            body += c;
            ++m_i;
            continue;
        }
        if (m_i + 1 >= m_p.size())
            return Status::error("pattern ends with a backslash");
        char e = m_p[m_i + 1];
        m_i += 2;
        if (e == 'd')
            body += "0-9";
        else if (e == 'w')
            body += "[:alnum:]_";
        else if (e == 's')
            body += "[:space:]";
        else if (e == 't')
            body += '\t';
        else if (e == 'n')
            body += '\n';
        else if (e == ']')
            rbracket = true;
        else if (e == '-')
            dash = true;
        else if (e == '^')
            caret = true;
        else if (std::strchr("\\./*+?(){}|$[", e))
            body += e; // literal inside an ERE bracket
        else
            return Status::error(std::string("\\") + e + " inside [...] is not supported");
    }
    if (body.empty() && !rbracket && !dash && caret && !negate) {
        m_out += "\\^";
        return Status::ok();
    }
    if (body.empty() && !rbracket && !dash && !caret)
        return Status::error("empty character class is not supported");
    m_out += '[';
    if (negate)
        m_out += '^';
    if (rbracket)
        m_out += ']';
    if (body.empty() && caret && !rbracket) { // '^' may not come first
        m_out += dash ? "-^" : "^";
        m_out += ']';
        return dash || negate ? Status::ok() : Status::error("unsupported character class");
    }
    m_out += body;
    if (caret)
        m_out += '^';
    if (dash)
        m_out += '-';
    m_out += ']';
    return Status::ok();
}

Status EreTranslator::group()
{
    if (m_i + 1 < m_p.size() && m_p[m_i + 1] == '?') {
        if (m_i + 2 < m_p.size() && m_p[m_i + 2] == ':') {
            m_i += 3;
        } else {
            return Status::error("lookahead and lookbehind are not supported");
        }
    } else {
        ++m_i;
    }
    if (int(m_groups.size()) >= PatternMatcher::kMaxGroupDepth)
        return Status::error("groups nested deeper than " + std::to_string(PatternMatcher::kMaxGroupDepth));
    m_groups.push_back(Group {});
    m_out += '(';
    return Status::ok();
}

// A counted repetition {n}, {n,}, {n,m} at m_i (on '{'), or a literal '{' (ECMAScript Annex B).
Status EreTranslator::counted()
{
    size_t j = m_i + 1;
    auto number = [&](long& v) {
        size_t s = j;
        while (j < m_p.size() && std::isdigit((unsigned char)m_p[j]) && j - s < 6)
            ++j;
        if (j == s)
            return false;
        v = std::stol(std::string(m_p.substr(s, j - s)));
        return true;
    };
    long lo = 0, hi = -1;
    bool ok = number(lo);
    if (ok && j < m_p.size() && m_p[j] == ',') {
        ++j;
        if (j < m_p.size() && m_p[j] != '}')
            ok = number(hi);
    } else {
        hi = lo;
    }
    if (!ok || j >= m_p.size() || m_p[j] != '}') {
        literal('{');
        ++m_i;
        return Status::ok();
    }
    if (lo > PatternMatcher::kMaxRepeat || hi > PatternMatcher::kMaxRepeat)
        return Status::error(
            "repetition counts above " + std::to_string(PatternMatcher::kMaxRepeat) + " are not supported");
    if (m_lastGroupCounted)
        return Status::error("a counted repetition of a group holding another one is not supported");
    if (Status q = quantifier(); !q)
        return q;
    if (!m_groups.empty())
        m_groups.back().counted = true;
    m_out.append(m_p.substr(m_i, j + 1 - m_i));
    m_i = j + 1;
    skipLazy();
    return Status::ok();
}

Expected<std::string> EreTranslator::run()
{
    while (m_i < m_p.size()) {
        const char c = m_p[m_i];
        bool groupClosed = false;
        Status s;
        switch (c) {
        case '\\':
            s = escape();
            break;
        case '[':
            s = bracket();
            break;
        case '(':
            s = group();
            break;
        case ')':
            if (m_groups.empty())
                return Status::error("unbalanced ')'");
            m_lastGroupCounted = m_groups.back().counted;
            m_groups.pop_back();
            if (!m_groups.empty())
                m_groups.back().counted = m_groups.back().counted || m_lastGroupCounted;
            m_out += ')';
            ++m_i;
            groupClosed = true;
            break;
        case '*':
        case '+':
        case '?':
            if (Status q = quantifier(); !q)
                return q.withContext("at offset " + std::to_string(m_i));
            m_out += c;
            ++m_i;
            skipLazy();
            m_afterQuantifier = true;
            m_afterGroup = false;
            continue; // a quantifier keeps the group flag of its atom for a following '{' check
        case '{':
            s = counted();
            break;
        case '}':
            literal('}');
            ++m_i;
            break;
        default:
            m_out += c;
            ++m_i;
            break;
        }
        if (!s)
            return s.withContext("at offset " + std::to_string(m_i));
        // A counted repetition just written leaves its '}' as the last output character.
        m_afterQuantifier = c == '{' && !m_out.empty() && m_out.back() == '}';
        m_afterGroup = groupClosed;
        if (!groupClosed)
            m_lastGroupCounted = false;
    }
    if (!m_groups.empty())
        return Status::error("unbalanced '('");
    return m_out;
}

} // namespace

Expected<std::string> PatternMatcher::toPosixEre(std::string_view pattern)
{
    return EreTranslator(pattern).run();
}

Expected<PatternMatcher> PatternMatcher::compile(const std::string& pattern)
{
    if (pattern.size() > kMaxPatternLength)
        return Status::error("regular expression longer than " + std::to_string(kMaxPatternLength) + " characters");
    auto fail = [&](const std::string& why) { return Status::error("regular expression '" + pattern + "': " + why); };
    auto ere = toPosixEre(pattern);
    if (!ere)
        return fail(ere.error());
    std::regex checked;
    try {
        // Validates the pattern with ECMAScript's own rules (compiling only; it never searches here).
        checked = std::regex(pattern, std::regex::ECMAScript | std::regex::icase | std::regex::nosubs);
    } catch (const std::regex_error& e) {
        return fail(e.what());
    }
    PatternMatcher m;
    m.m_pattern = pattern;
    m.m_ere = ere.value();
    auto engine = std::make_shared<Engine>();
#ifdef GAPSCOPE_HAVE_POSIX_REGEX
    int rc = regcomp(&engine->re, m.m_ere.c_str(), REG_EXTENDED | REG_ICASE | REG_NOSUB);
    if (rc != 0) {
        char msg[256];
        regerror(rc, &engine->re, msg, sizeof msg);
        return fail(std::string("not supported by the search engine: ") + msg);
    }
    engine->compiled = true;
#else
    engine->re = std::move(checked);
#endif
    m.m_engine = std::move(engine);
    return m;
}

bool PatternMatcher::search(std::string_view text) const
{
    if (!m_engine)
        return false;
#ifdef GAPSCOPE_HAVE_POSIX_REGEX
    // regexec needs a NUL-terminated string; names are classified once each, so the copy is cheap.
    std::string s(text);
    return regexec(&m_engine->re, s.c_str(), 0, nullptr, 0) == 0;
#else
    return std::regex_search(text.begin(), text.end(), m_engine->re);
#endif
}

} // namespace gapscope::model
