// SPDX-License-Identifier: MIT
#include "args.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

namespace gapscope::cli {

ArgParser::ArgParser(std::string command, std::string usageTail, std::string description)
    : m_command(std::move(command))
    , m_usageTail(std::move(usageTail))
    , m_description(std::move(description))
{
}

void ArgParser::flag(const std::string& name, const std::string& help, bool& target)
{
    Opt o;
    o.name = name;
    o.help = help;
    o.flagTarget = &target;
    m_opts.push_back(std::move(o));
}

void ArgParser::option(const std::string& shortName, const std::string& name, const std::string& metavar,
    const std::string& help, std::string& target)
{
    m_opts.push_back({ shortName, name, metavar, help, [&target](const std::string& v) {
                          target = v;
                          return true;
                      } });
}

void ArgParser::option(const std::string& name, const std::string& metavar, const std::string& help, int64_t& target)
{
    m_opts.push_back({ "", name, metavar, help, [&target](const std::string& v) {
                          char* end = nullptr;
                          long long x = std::strtoll(v.c_str(), &end, 10);
                          if (v.empty() || *end != '\0')
                              return false;
                          target = x;
                          return true;
                      } });
}

void ArgParser::option(const std::string& name, const std::string& metavar, const std::string& help, double& target)
{
    m_opts.push_back({ "", name, metavar, help, [&target](const std::string& v) {
                          char* end = nullptr;
                          double x = std::strtod(v.c_str(), &end);
                          if (v.empty() || *end != '\0' || !std::isfinite(x))
                              return false;
                          target = x;
                          return true;
                      } });
}

void ArgParser::multi(const std::string& name, const std::string& metavar, const std::string& help,
    std::vector<std::string>& target)
{
    m_opts.push_back({ "", name, metavar, help, [&target](const std::string& v) {
                          target.push_back(v);
                          return true;
                      } });
}

void ArgParser::setPositionals(size_t min, size_t max)
{
    m_minPos = min;
    m_maxPos = max;
}

const ArgParser::Opt* ArgParser::lookup(const std::string& name) const
{
    for (const auto& o : m_opts)
        if (o.name == name || (!o.shortName.empty() && o.shortName == name))
            return &o;
    return nullptr;
}

bool ArgParser::given(const std::string& name) const
{
    for (const auto& g : m_given)
        if (g == name)
            return true;
    return false;
}

std::string ArgParser::help() const
{
    std::ostringstream s;
    s << "usage: gapscope-cli " << m_command << " [options] " << m_usageTail << "\n\n" << m_description << "\n";
    if (!m_opts.empty()) {
        s << "\noptions:\n";
        for (const auto& o : m_opts) {
            std::string left = "  ";
            if (!o.shortName.empty())
                left += o.shortName + ", ";
            left += o.name;
            if (!o.flagTarget)
                left += " " + o.metavar;
            s << left;
            if (left.size() < 28)
                s << std::string(28 - left.size(), ' ');
            else
                s << "\n" << std::string(28, ' ');
            s << o.help << "\n";
        }
    }
    s << "  -h, --help                show this help\n";
    return s.str();
}

int ArgParser::usageError(const std::string& message) const
{
    std::cerr << "gapscope-cli " << m_command << ": " << message << "\n"
              << "(see 'gapscope-cli " << m_command << " --help')\n";
    return 2;
}

int ArgParser::parse(const std::vector<std::string>& args)
{
    bool onlyPositionals = false;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (onlyPositionals || a.empty() || a[0] != '-' || a == "-") {
            m_positionals.push_back(a);
            continue;
        }
        if (a == "--") {
            onlyPositionals = true;
            continue;
        }
        if (a == "-h" || a == "--help") {
            std::cout << help();
            return 0;
        }
        std::string name = a, value;
        bool hasInlineValue = false;
        if (auto eq = a.find('='); eq != std::string::npos && a.rfind("--", 0) == 0) {
            name = a.substr(0, eq);
            value = a.substr(eq + 1);
            hasInlineValue = true;
        }
        const Opt* o = lookup(name);
        if (!o)
            return usageError("unknown option '" + name + "'");
        m_given.push_back(o->name);
        if (o->flagTarget) {
            if (hasInlineValue)
                return usageError("option '" + name + "' takes no value");
            *o->flagTarget = true;
            continue;
        }
        if (!hasInlineValue) {
            if (i + 1 >= args.size())
                return usageError("option '" + name + "' needs a value (" + o->metavar + ")");
            value = args[++i];
        }
        if (!o->set(value))
            return usageError("invalid value '" + value + "' for " + name + " (" + o->metavar + ")");
    }
    if (m_positionals.size() < m_minPos)
        return usageError("missing argument: " + m_usageTail);
    if (m_positionals.size() > m_maxPos)
        return usageError("too many arguments");
    return -1;
}

bool parseDurationNs(const std::string& s, int64_t& out)
{
    if (s.empty())
        return false;
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || !std::isfinite(v))
        return false;
    std::string unit(end);
    double mul = 1;
    if (unit.empty() || unit == "ns")
        mul = 1;
    else if (unit == "us")
        mul = 1e3;
    else if (unit == "ms")
        mul = 1e6;
    else if (unit == "s")
        mul = 1e9;
    else
        return false;
    out = static_cast<int64_t>(std::llround(v * mul));
    return true;
}

bool parseRange(const std::string& s, int64_t& a, int64_t& b)
{
    auto colon = s.find(':');
    if (colon == std::string::npos)
        return false;
    std::string left = s.substr(0, colon), right = s.substr(colon + 1);
    auto num = [](const std::string& t, int64_t& v) {
        char* end = nullptr;
        long long x = std::strtoll(t.c_str(), &end, 10);
        if (*end != '\0')
            return false;
        v = x;
        return true;
    };
    if (!left.empty() && !num(left, a))
        return false;
    if (!right.empty() && !num(right, b))
        return false;
    return true;
}

} // namespace gapscope::cli
