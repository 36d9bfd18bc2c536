// SPDX-License-Identifier: MIT
#pragma once

// PatternMatcher: "is this regular expression found anywhere in the text, ignoring case?", fast and
// safe on any pattern a user writes.
//
// Syntax: ECMAScript (as std::regex checks it), without lookaround and back-references. Searches run
// on the C library's POSIX engine, which needs no backtracking: time grows with the text, never
// exponentially, whatever the pattern (libstdc++'s std::regex backtracks, takes about 60 us per
// search on 300-character kernel names, and a pattern like (a*)*b can make it run for ever). The
// pattern is translated to an equivalent POSIX ERE for a yes/no search: \d \w \s (and \D \W \S)
// become bracket expressions, (?: a plain group, lazy quantifiers greedy ones (same answer for a
// search), \t \n \xHH the character; \b \B are the C library's word boundaries. Limits: at most
// kMaxPatternLength characters, kMaxGroupDepth nested groups, counted repetitions {n,m} up to
// kMaxRepeat and not nested in another counted repetition (they multiply the automaton).
// Where <regex.h> is missing, std::regex searches (same syntax, backtracking).
//
// Threading: immutable after construction; search() is safe from any thread.

#include "model/base/status.h"

#include <memory>
#include <string>
#include <string_view>

namespace gapscope::model {

class PatternMatcher {
public:
    static constexpr size_t kMaxPatternLength = 4096;
    static constexpr int kMaxGroupDepth = 32;
    static constexpr int kMaxRepeat = 100;

    // Fails with a message naming the problem when the pattern is not valid ECMAScript or uses
    // what is not supported (lookaround, back-references, the limits above).
    static Expected<PatternMatcher> compile(const std::string& pattern);

    bool search(std::string_view text) const;
    const std::string& pattern() const { return m_pattern; }
    const std::string& ere() const { return m_ere; } // the POSIX ERE searched for

    // The POSIX ERE equivalent of an ECMAScript pattern for a search, or why there is none.
    static Expected<std::string> toPosixEre(std::string_view pattern);

private:
    struct Engine;
    std::string m_pattern;
    std::string m_ere;
    std::shared_ptr<const Engine> m_engine;
};

} // namespace gapscope::model
