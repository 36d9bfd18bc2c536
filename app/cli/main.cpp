// SPDX-License-Identifier: MIT
// gapscope-cli: the headless tool (links model/ only, no Qt). Subcommands register themselves.
#include "command.h"

#include <algorithm>
#include <cstring>
#include <iostream>

namespace gapscope::cli {
std::vector<Command>& commandRegistry()
{
    static std::vector<Command> commands;
    return commands;
}
} // namespace gapscope::cli

static void printUsage(std::ostream& out)
{
    auto commands = gapscope::cli::commandRegistry();
    std::sort(commands.begin(), commands.end(),
        [](const auto& a, const auto& b) { return std::strcmp(a.name, b.name) < 0; });
    out << "usage: gapscope-cli <command> [options] [args]\n\n"
        << "gapscope " GAPSCOPE_VERSION ": where did the time of an LLM decode step go.\n\ncommands:\n";
    for (const auto& c : commands) {
        std::string n = c.name;
        out << "  " << n << std::string(n.size() < 12 ? 12 - n.size() : 1, ' ') << c.summary << "\n";
    }
    out << "\n'gapscope-cli <command> --help' describes a command.\n";
}

int main(int argc, char** argv)
{
    if (argc < 2) {
        printUsage(std::cerr);
        return gapscope::cli::kExitUsage;
    }
    std::string name = argv[1];
    if (name == "-h" || name == "--help" || name == "help") {
        printUsage(std::cout);
        return 0;
    }
    if (name == "--version") {
        std::cout << "gapscope-cli " GAPSCOPE_VERSION "\n";
        return 0;
    }
    std::vector<std::string> args(argv + 2, argv + argc);
    for (const auto& c : gapscope::cli::commandRegistry())
        if (name == c.name) {
            try {
                return c.run(args);
            } catch (const std::exception& e) {
                std::cerr << "gapscope-cli " << name << ": internal error: " << e.what() << "\n";
                return gapscope::cli::kExitFailure;
            }
        }
    std::cerr << "gapscope-cli: unknown command '" << name << "'\n\n";
    printUsage(std::cerr);
    return gapscope::cli::kExitUsage;
}
