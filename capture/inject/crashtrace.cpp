// SPDX-License-Identifier: MIT
#include "capture/inject/crashtrace.h"

#include <execinfo.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gapscope::capture::inject {

namespace {

constexpr int kSignals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
struct sigaction g_previous[sizeof(kSignals) / sizeof(kSignals[0])];

void writeAll(const char* s)
{
    size_t n = std::strlen(s);
    while (n > 0) {
        const ssize_t w = ::write(STDERR_FILENO, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= size_t(w);
    }
}

void onFatal(int sig, siginfo_t* info, void* ctx)
{
    char line[160];
    std::snprintf(line, sizeof(line), "gapscope-inject: fatal signal %d at address %p, thread %ld; native frames:\n",
        sig, info ? info->si_addr : nullptr, long(::syscall(SYS_gettid)));
    writeAll(line);
    void* frames[48];
    const int n = ::backtrace(frames, 48);
    ::backtrace_symbols_fd(frames, n, STDERR_FILENO);
    size_t i = 0;
    while (i < sizeof(kSignals) / sizeof(kSignals[0]) && kSignals[i] != sig)
        ++i;
    const struct sigaction& prev = g_previous[i];
    if (prev.sa_flags & SA_SIGINFO) {
        if (prev.sa_sigaction) {
            prev.sa_sigaction(sig, info, ctx);
            return;
        }
    } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
        prev.sa_handler(sig);
        return;
    }
    ::signal(sig, SIG_DFL);
    ::raise(sig);
}

} // namespace

void installCrashTraceFromEnv()
{
    const char* v = std::getenv("GAPSCOPE_INJECT_CRASH_TRACE");
    if (!v || std::strcmp(v, "1") != 0)
        return;
    void* warm[1];
    ::backtrace(warm, 1); // loads the unwinder now, not inside the handler
    for (size_t i = 0; i < sizeof(kSignals) / sizeof(kSignals[0]); ++i) {
        struct sigaction sa;
        std::memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = onFatal;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESETHAND;
        sigemptyset(&sa.sa_mask);
        ::sigaction(kSignals[i], &sa, &g_previous[i]);
    }
}

} // namespace gapscope::capture::inject
