// SPDX-License-Identifier: MIT
#pragma once

// gapscope-cli subcommands. Each cmd_<name>.cpp defines one command and registers it with
// GAPSCOPE_CLI_COMMAND; main.cpp dispatches. A command prints results on stdout, errors on stderr
// ("gapscope-cli <name>: <what>"), and returns the process exit code:
//   0 ok, 1 the input has problems (e.g. validate found damage), 2 usage error, 3 I/O or other failure.

#include <string>
#include <vector>

namespace gapscope::cli {

enum ExitCode { kExitOk = 0, kExitProblems = 1, kExitUsage = 2, kExitFailure = 3 };

struct Command {
    const char* name;
    const char* summary; // one line for the command list
    int (*run)(const std::vector<std::string>& args); // args exclude the command name
};

std::vector<Command>& commandRegistry();

struct CommandRegistrar {
    explicit CommandRegistrar(const Command& c) { commandRegistry().push_back(c); }
};

} // namespace gapscope::cli

#define GAPSCOPE_CLI_COMMAND(ident, name, summary, fn)                                                               \
    static ::gapscope::cli::CommandRegistrar gapscopeCliRegistrar_##ident(::gapscope::cli::Command { name, summary, fn })
