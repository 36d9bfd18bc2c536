// SPDX-License-Identifier: MIT
#pragma once

// A small command-line option parser for gapscope-cli subcommands. Options are declared up front so
// that --help is generated and unknown options are rejected with a clear message.
//
//   ArgParser p("info", "FILE", "Print the header, ranks, GPUs, steps, counts and losses of a trace.");
//   bool json = false;
//   p.flag("--json", "machine-readable output", json);
//   std::string out; p.option("-o", "--output", "FILE", "write here", out);
//   if (int rc = p.parse(args); rc >= 0) return rc;   // printed help (0) or an error (2)
//   p.positionals() ...

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gapscope::cli {

class ArgParser {
public:
    ArgParser(std::string command, std::string usageTail, std::string description);

    void flag(const std::string& name, const std::string& help, bool& target);
    void option(const std::string& shortName, const std::string& name, const std::string& metavar,
        const std::string& help, std::string& target);
    void option(const std::string& name, const std::string& metavar, const std::string& help, std::string& target)
    {
        option("", name, metavar, help, target);
    }
    void option(const std::string& name, const std::string& metavar, const std::string& help, int64_t& target);
    void option(const std::string& name, const std::string& metavar, const std::string& help, double& target);
    // Repeatable option: every occurrence is appended.
    void multi(const std::string& name, const std::string& metavar, const std::string& help,
        std::vector<std::string>& target);
    void setPositionals(size_t min, size_t max); // default: 0..unlimited

    // Returns -1 when parsing succeeded and the command should run; otherwise the exit code to
    // return (0 after --help, 2 after a usage error, which has been printed to stderr).
    int parse(const std::vector<std::string>& args);
    const std::vector<std::string>& positionals() const { return m_positionals; }
    bool given(const std::string& name) const; // whether an option/flag appeared
    std::string help() const;
    int usageError(const std::string& message) const; // prints, returns 2

private:
    struct Opt {
        std::string shortName, name, metavar, help;
        std::function<bool(const std::string&)> set; // null for flags
        bool* flagTarget = nullptr;
    };
    const Opt* lookup(const std::string& name) const;
    std::string m_command, m_usageTail, m_description;
    std::vector<Opt> m_opts;
    std::vector<std::string> m_positionals;
    std::vector<std::string> m_given;
    size_t m_minPos = 0, m_maxPos = SIZE_MAX;
};

// "12ms", "3.5us", "100" (ns) -> nanoseconds; false on bad input.
bool parseDurationNs(const std::string& s, int64_t& out);
// "A:B" with either side optional -> [a, b]; false on bad input.
bool parseRange(const std::string& s, int64_t& a, int64_t& b);

} // namespace gapscope::cli
