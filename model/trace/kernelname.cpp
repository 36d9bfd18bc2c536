// SPDX-License-Identifier: MIT
#include "model/trace/kernelname.h"

#include <cctype>

namespace gapscope::model {
namespace {

constexpr std::string_view kEllipsis = "\xE2\x80\xA6"; // U+2026
constexpr std::string_view kAnonymous = "(anonymous namespace)";

bool isIdentChar(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}

// Index one past the bracket that closes the one at `open`, counting (), <>, [] and {} alike;
// npos when it is never closed (a truncated name).
size_t closing(std::string_view s, size_t open)
{
    int depth = 0;
    for (size_t i = open; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '(' || c == '<' || c == '[' || c == '{')
            ++depth;
        else if ((c == ')' || c == '>' || c == ']' || c == '}') && --depth == 0)
            return i + 1;
    }
    return std::string_view::npos;
}

bool endsWith(const std::string& s, std::string_view tail)
{
    return s.size() >= tail.size() && std::string_view(s).substr(s.size() - tail.size()) == tail;
}

// A template argument list kept as it is: one plain (possibly qualified) identifier.
bool plainIdentifier(std::string_view inner)
{
    if (inner.empty())
        return false;
    for (char c : inner)
        if (!isIdentChar(c) && c != ':')
            return false;
    return true;
}

// Drops everything up to the last top-level "::" of `name` (brackets already collapsed).
std::string lastComponent(const std::string& name)
{
    int depth = 0;
    size_t cut = 0;
    for (size_t i = 0; i + 1 < name.size(); ++i) {
        const char c = name[i];
        if (c == '(' || c == '<' || c == '{')
            ++depth;
        else if (c == ')' || c == '>' || c == '}')
            --depth;
        else if (depth == 0 && c == ':' && name[i + 1] == ':')
            cut = i + 2;
    }
    return name.substr(cut);
}

} // namespace

std::string shortKernelName(std::string_view full, KernelNamespaces namespaces)
{
    std::string out;
    out.reserve(std::min<size_t>(full.size(), 128));
    bool signature = false;
    for (size_t i = 0; i < full.size();) {
        const char c = full[i];
        const char before = out.empty() ? '\0' : out.back();
        if (c == ' ') {
            // A top-level space ends a return type ("void ", "unsigned int ") before the name; in
            // plain text ("Memcpy HtoD (…)") no signature follows, and the original is returned.
            out.clear();
            ++i;
            continue;
        }
        if (endsWith(out, "operator") && (c == '(' || c == '<' || c == '[')) {
            // operator(), operator<, operator<<, operator[]: the symbol is part of the name.
            const size_t end = full.find('(', c == '(' ? i + 2 : i);
            out.append(full.substr(i, std::min(end, full.size()) - i));
            i = end == std::string_view::npos ? full.size() : end;
            continue;
        }
        const bool afterName = isIdentChar(before) || before == '>';
        if ((c == '(' && (before == ':' || full.compare(i, kAnonymous.size(), kAnonymous) == 0)) || c == '{'
            || c == '[') {
            // "(anonymous namespace)", "{lambda()#1}", "[clone .kd]": kept verbatim.
            const size_t end = closing(full, i);
            if (end == std::string_view::npos)
                return std::string(full);
            out.append(full.substr(i, end - i));
            i = end;
            continue;
        }
        if ((c == '<' || c == '(') && afterName) {
            const size_t end = closing(full, i);
            if (end == std::string_view::npos)
                return std::string(full);
            const std::string_view inner = full.substr(i + 1, end - i - 2);
            if (c == '<') {
                if (plainIdentifier(inner))
                    out.append(full.substr(i, end - i));
                else
                    out.append("<").append(kEllipsis).append(">");
                i = end;
                continue;
            }
            out.append(inner.empty() ? "()" : "(" + std::string(kEllipsis) + ")");
            signature = true;
            break; // the parameter list ends the name; a trailing const or scope is dropped
        }
        if (c == '(' || c == '<' || c == ')' || c == '>')
            return std::string(full); // brackets that are no C++ syntax: plain text
        out.push_back(c);
        ++i;
    }
    if (!signature || out.empty())
        return std::string(full);
    return namespaces == KernelNamespaces::Drop ? lastComponent(out) : out;
}

} // namespace gapscope::model
