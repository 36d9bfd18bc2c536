// SPDX-License-Identifier: MIT
#include "model/import/demangle.h"

#include <cstdlib>
#include <cxxabi.h>

namespace gapscope::model::importer {

namespace {
bool endsWith(std::string_view s, std::string_view tail)
{
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
} // namespace

std::string demangle(std::string_view name)
{
    if (name.size() < 3 || name.compare(0, 2, "_Z") != 0)
        return std::string(name);
    int status = 0;
    char* d = abi::__cxa_demangle(std::string(name).c_str(), nullptr, nullptr, &status);
    std::string out = status == 0 && d ? std::string(d) : std::string(name);
    std::free(d);
    return out;
}

std::string rocmKernelName(std::string_view symbol)
{
    // The demangler reads "_Z...Ev.kd" as a clone of the function ("[clone .kd]"): drop the suffix first.
    if (endsWith(symbol, " [clone .kd]"))
        symbol.remove_suffix(12);
    else if (endsWith(symbol, ".kd") && symbol.size() > 3)
        symbol.remove_suffix(3);
    return demangle(symbol);
}

} // namespace gapscope::model::importer
