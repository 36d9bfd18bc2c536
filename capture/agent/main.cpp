// SPDX-License-Identifier: MIT
// gapscope-agent: the per-host capture daemon (see agentserver.h), `launch`, and `--replay`.
#include "capture/agent/agentserver.h"
#include "capture/agent/launcher.h"
#include "capture/protocol/socketpath.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifndef GAPSCOPE_VERSION
#define GAPSCOPE_VERSION "0.0.0"
#endif

using namespace gapscope::capture;

namespace {

AgentServer* g_server = nullptr;

void onSignal(int)
{
    if (g_server)
        g_server->stop();
}

const char* kUsage = R"(usage: gapscope-agent [options]
       gapscope-agent launch [options] [--inject LIB] [--no-agent] -- COMMAND [ARGS...]
       gapscope-agent --replay FILE [--speed X] [options]

The per-host capture agent: rank processes (loaded with libgapscope-inject.so) register on a Unix
socket; clients (gapscope-cli capture, the viewer) connect over TCP and capture decode steps.

options:
  --listen ADDR        client address (default 127.0.0.1:7433; port 0 picks a free port). Any address
                       other than loopback needs --token-file.
  --token-file F       clients must send this token (created with a random token when missing)
  --socket PATH        rank socket (default: $GAPSCOPE_AGENT_SOCKET, $XDG_RUNTIME_DIR/gapscope/agent.sock,
                       /tmp/gapscope-$UID/agent.sock)
  --output-dir DIR     where capture files go (default /tmp/gapscope-$UID/captures)
  --port-file F        write the bound client port to F once listening
  --replay FILE        serve a recorded .gapscope file as if it were being captured
  --speed X            replay speed (default 1; 0 = as fast as possible)
  --queue-mb N         rank data waiting for the merge thread before events are dropped (default 48)
  --client-queue-mb N  stream data waiting for one client before its stream is cut (default 16)
  --flush-ms N         longest time events wait before they go to the file and clients (default 10)
  --chunk-events N     events per chunk at most (default 65536)
  --arm-timeout S      give up arming/aligning after S seconds (default 30)
  --handshake-timeout S  close a client without a valid Hello, a rank without Register, after S
                       seconds (default 5)
  --rank-input-mb N    receive buffers of all rank connections together (default 256, at least 32);
                       over it the connection holding the largest unfinished message is closed
  --version, --help
launch options:
  --inject LIB         libgapscope-inject.so to load (default: found next to this executable)
  --no-agent           do not start a background agent when none answers on the socket
  --agent-log F        log of the background agent (default: next to the socket)
)";

bool number(const std::string& s, double& out)
{
    char* end = nullptr;
    out = std::strtod(s.c_str(), &end);
    return !s.empty() && end && *end == '\0';
}

// Parses agent options from args[i..]; returns 0 to continue, 2 on a usage error, -1 after --help.
int parseAgentOption(const std::vector<std::string>& args, size_t& i, AgentOptions& o)
{
    const std::string& a = args[i];
    auto value = [&](std::string& out) {
        if (i + 1 >= args.size()) {
            std::fprintf(stderr, "gapscope-agent: %s needs a value\n", a.c_str());
            return false;
        }
        out = args[++i];
        return true;
    };
    auto num = [&](double& out) {
        std::string v;
        if (!value(v))
            return false;
        if (!number(v, out) || out < 0) {
            std::fprintf(stderr, "gapscope-agent: %s: bad number '%s'\n", a.c_str(), v.c_str());
            return false;
        }
        return true;
    };
    double d = 0;
    if (a == "--listen")
        return value(o.listen) ? 0 : 2;
    if (a == "--token-file")
        return value(o.tokenFile) ? 0 : 2;
    if (a == "--socket")
        return value(o.socketPath) ? 0 : 2;
    if (a == "--output-dir")
        return value(o.outputDir) ? 0 : 2;
    if (a == "--port-file")
        return value(o.portFile) ? 0 : 2;
    if (a == "--replay")
        return value(o.replayFile) ? 0 : 2;
    if (a == "--speed")
        return num(o.replaySpeed) ? 0 : 2;
    if (a == "--queue-mb" && num(d))
        return o.mergeQueueBytes = size_t(d * 1048576), 0;
    if (a == "--client-queue-mb" && num(d))
        return o.clientQueueBytes = size_t(d * 1048576), 0;
    if (a == "--flush-ms" && num(d))
        return o.flushIntervalMs = uint32_t(d), 0;
    if (a == "--chunk-events" && num(d))
        return o.chunkEvents = uint32_t(std::max(1.0, d)), 0;
    if (a == "--arm-timeout" && num(d))
        return o.armTimeoutS = d, 0;
    if (a == "--handshake-timeout" && num(d))
        return o.handshakeTimeoutS = d, 0;
    if (a == "--rank-input-mb" && num(d))
        return o.rankInputBytes = size_t(d * 1048576), 0;
    if (a == "--help" || a == "-h") {
        std::fputs(kUsage, stdout);
        return -1;
    }
    if (a.rfind("--", 0) == 0
        && (a == "--queue-mb" || a == "--client-queue-mb" || a == "--flush-ms" || a == "--chunk-events"
            || a == "--arm-timeout" || a == "--handshake-timeout" || a == "--rank-input-mb"))
        return 2; // bad value, already reported
    std::fprintf(stderr, "gapscope-agent: unknown option '%s' (see --help)\n", a.c_str());
    return 2;
}

int runLaunch(const std::vector<std::string>& args)
{
    LaunchOptions lo;
    size_t i = 1;
    for (; i < args.size() && args[i] != "--"; ++i) {
        if (args[i] == "--inject" && i + 1 < args.size()) {
            lo.injectLibrary = args[++i];
        } else if (args[i] == "--no-agent") {
            lo.startAgent = false;
        } else if (args[i] == "--agent-log" && i + 1 < args.size()) {
            lo.agentLog = args[++i];
        } else if (const int rc = parseAgentOption(args, i, lo.agent); rc != 0) {
            return rc < 0 ? 0 : 2;
        }
    }
    if (i < args.size())
        lo.command.assign(args.begin() + long(i) + 1, args.end());
    const gapscope::Status s = launch(lo);
    std::fprintf(stderr, "gapscope-agent launch: %s\n", s.message().c_str());
    return 3;
}

} // namespace

int main(int argc, char** argv)
{
    std::vector<std::string> args(argv + 1, argv + argc);
    if (!args.empty() && args[0] == "--version") {
        std::printf("gapscope-agent %s\n", GAPSCOPE_VERSION);
        return 0;
    }
    if (!args.empty() && args[0] == "launch")
        return runLaunch(args);
    AgentOptions o;
    for (size_t i = 0; i < args.size(); ++i)
        if (const int rc = parseAgentOption(args, i, o); rc != 0)
            return rc < 0 ? 0 : 2;
    AgentServer server(o);
    if (gapscope::Status s = server.start(); !s) {
        std::fprintf(stderr, "gapscope-agent: %s\n", s.message().c_str());
        return 3;
    }
    g_server = &server;
    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);
    std::signal(SIGPIPE, SIG_IGN);
    if (!o.replayFile.empty())
        std::printf("gapscope-agent: replaying %s at speed %g; clients on port %u\n", o.replayFile.c_str(),
            o.replaySpeed, unsigned(server.port()));
    else
        std::printf("gapscope-agent: ranks on %s; clients on %s (port %u)\n", server.socketPath().c_str(),
            o.listen.c_str(), unsigned(server.port()));
    std::fflush(stdout);
    server.run();
    g_server = nullptr;
    return 0;
}
