// SPDX-License-Identifier: MIT
#include "capture/agent/launcher.h"

#include "capture/agent/agentserver.h"
#include "capture/protocol/netutil.h"
#include "capture/protocol/socketpath.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace gapscope::capture {

static bool isFile(const std::string& p)
{
    struct stat st { };
    return !p.empty() && ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string findInjectLibrary()
{
    if (const char* env = std::getenv("GAPSCOPE_INJECT_LIB"); env && isFile(env))
        return env;
    char exe[4096] = {};
    const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return {};
    std::string dir(exe, size_t(n));
    dir = dir.substr(0, dir.rfind('/'));
    for (const char* rel : { "/libgapscope-inject.so", "/../inject/libgapscope-inject.so",
             "/../lib/libgapscope-inject.so", "/../lib/gapscope/libgapscope-inject.so" }) {
        const std::string p = dir + rel;
        if (isFile(p)) {
            char real[4096] = {};
            return ::realpath(p.c_str(), real) ? std::string(real) : p;
        }
    }
    return {};
}

// Starts an agent in a detached grandchild process (its own session, output to a log file).
static Status startBackgroundAgent(const LaunchOptions& o, const std::string& socketPath)
{
    const std::string log
        = o.agentLog.empty() ? socketPath.substr(0, socketPath.rfind('/')) + "/agent.log" : o.agentLog;
    const pid_t child = ::fork();
    if (child < 0)
        return Status::error(std::string("fork: ") + std::strerror(errno));
    if (child == 0) {
        ::setsid();
        if (::fork() != 0)
            ::_exit(0);
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
        const int devnull = ::open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            ::dup2(devnull, 0);
        if (fd >= 0) {
            ::dup2(fd, 1);
            ::dup2(fd, 2);
        }
        AgentOptions ao = o.agent;
        ao.socketPath = socketPath;
        AgentServer server(ao);
        if (Status s = server.start(); !s) {
            std::fprintf(stderr, "gapscope-agent: %s\n", s.message().c_str());
            ::_exit(3);
        }
        std::fprintf(stderr, "gapscope-agent: serving ranks on %s, clients on port %u\n", socketPath.c_str(),
            unsigned(server.port()));
        server.run();
        ::_exit(0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    for (int i = 0; i < 100; ++i) { // up to 5 s for the socket to answer
        if (connectUnix(socketPath))
            return Status::ok();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return Status::error("the background agent did not come up on " + socketPath + " (see " + log + ")");
}

Status launch(const LaunchOptions& o)
{
    if (o.command.empty())
        return Status::error("launch: no command given (gapscope-agent launch -- COMMAND ARGS...)");
    const std::string socketPath = o.agent.socketPath.empty() ? defaultAgentSocketPath() : o.agent.socketPath;
    std::string lib = o.injectLibrary.empty() ? findInjectLibrary() : o.injectLibrary;
    if (!isFile(lib))
        return Status::error("libgapscope-inject.so not found" + (lib.empty() ? std::string() : " at " + lib)
            + " (build it with CUDA, or pass --inject PATH / set GAPSCOPE_INJECT_LIB)");
    if (o.startAgent && !connectUnix(socketPath)) {
        if (Status s = prepareSocketDirectory(socketPath); !s)
            return s;
        if (Status s = startBackgroundAgent(o, socketPath); !s)
            return s;
    }
    if (const char* prev = std::getenv("CUDA_INJECTION64_PATH"); prev && *prev && lib != prev)
        std::fprintf(stderr, "gapscope-agent launch: replacing CUDA_INJECTION64_PATH=%s\n", prev);
    ::setenv("CUDA_INJECTION64_PATH", lib.c_str(), 1);
    ::setenv("NCCL_PROFILER_PLUGIN", lib.c_str(), 1);
    // NVTX ranges (the nvtx step rule and NVTX lanes) reach the library only through its own hook.
    if (const char* prev = std::getenv("NVTX_INJECTION64_PATH"); prev && *prev && lib != prev)
        std::fprintf(stderr, "gapscope-agent launch: replacing NVTX_INJECTION64_PATH=%s\n", prev);
    ::setenv("NVTX_INJECTION64_PATH", lib.c_str(), 1);
    ::setenv("GAPSCOPE_AGENT_SOCKET", socketPath.c_str(), 1);
    std::vector<char*> argv;
    for (const auto& a : o.command)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    return Status::error("launch: cannot run '" + o.command[0] + "': " + std::strerror(errno));
}

} // namespace gapscope::capture
