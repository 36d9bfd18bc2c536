// SPDX-License-Identifier: MIT
// gapscope-cli: the headless tool (links model/ only, no Qt). Subcommands register themselves.
#include "command.h"

#include "model/format/memorybudget.h"

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
    std::sort(
        commands.begin(), commands.end(), [](const auto& a, const auto& b) { return std::strcmp(a.name, b.name) < 0; });
    out << "usage: gapscope-cli <command> [options] [args]\n\n"
        << "gapscope " GAPSCOPE_VERSION ": where did the time of an LLM decode step go.\n\ncommands:\n";
    for (const auto& c : commands) {
        std::string n = c.name;
        out << "  " << n << std::string(n.size() < 12 ? 12 - n.size() : 1, ' ') << c.summary << "\n";
    }
    out << "\noptions of every command:\n  --max-memory SIZE  memory budget for loading a trace (e.g. 8G, 512M; "
           "default "
        << gapscope::format::MemoryBudget::defaultLimit() / 1000000 << "M: 3/4 of RAM or of ulimit -v)\n";
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
    for (size_t i = 0; i < args.size(); ++i) { // the one option every command takes
        std::string value;
        if (args[i] == "--max-memory" && i + 1 < args.size())
            value = args[i + 1];
        else if (args[i].rfind("--max-memory=", 0) == 0)
            value = args[i].substr(13);
        else
            continue;
        uint64_t bytes = 0;
        if (!gapscope::format::MemoryBudget::parse(value, bytes)) {
            std::cerr << "gapscope-cli " << name << ": --max-memory: '" << value
                      << "' is not a size (e.g. 8G, 512M, 1073741824)\n";
            return gapscope::cli::kExitUsage;
        }
        gapscope::format::MemoryBudget::setLimit(bytes);
        args.erase(args.begin() + long(i), args.begin() + long(i) + (args[i] == "--max-memory" ? 2 : 1));
        --i;
    }
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
