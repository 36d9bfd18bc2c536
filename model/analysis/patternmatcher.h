// SPDX-License-Identifier: MIT
#pragma once

// PatternMatcher: "is this ECMAScript regular expression found anywhere in the text, ignoring
// case?", fast. Kernel names are long C++ signatures (often 300-2000 characters), and libstdc++'s
// std::regex takes about 60 us per search on them; the POSIX ERE engine of the C library (a DFA)
// takes 2-4 us. So a pattern whose boolean search means the same in ERE and in ECMAScript
// (literals, ., [...] without backslashes, ^ $, groups, |, * + ? {m,n}, and the escapes \. \\ \(
// \) \[ \] \{ \} \* \+ \? \| \^ \$ \- \/) runs on <regex.h>; anything else (\d \w \b, (?:,
// lazy quantifiers, lookahead, back-references) runs on std::regex, so the semantics are always
// ECMAScript's. Limits (std::regex recurses): patterns of at most kMaxPatternLength characters and
// kMaxGroupDepth nested groups; the std::regex engine searches the first kMaxTextLength characters.
//
// Threading: immutable after construction; search() is safe from any thread.

#include "model/status.h"

#include <memory>
#include <string>
#include <string_view>

namespace gapscope::model {

class PatternMatcher {
public:
    static constexpr size_t kMaxPatternLength = 4096;
    static constexpr int kMaxGroupDepth = 32;
    static constexpr size_t kMaxTextLength = 8192; // for the std::regex engine

    // Fails with the engine's message when the pattern is not a valid ECMAScript regex.
    static Expected<PatternMatcher> compile(const std::string& pattern);

    bool search(std::string_view text) const;
    const std::string& pattern() const { return m_pattern; }
    bool usesPosixEngine() const { return m_posix != nullptr; }

    // Whether `pattern` only uses the syntax on which ERE and ECMAScript searches agree.
    static bool isPosixCompatible(std::string_view pattern);

private:
    struct Posix;
    struct Ecma;
    std::string m_pattern;
    std::shared_ptr<const Posix> m_posix;
    std::shared_ptr<const Ecma> m_ecma;
};

} // namespace gapscope::model
