// SPDX-License-Identifier: MIT
#pragma once

// GAPSCOPE_INJECT_CRASH_TRACE=1: on a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) of the
// traced process, write the faulting thread's native frames (object + offset) to stderr, then hand
// the signal to the handler that was installed before (Python's faulthandler, the default action).
// For finding which library a crash under capture comes from; off by default, nothing else changes.

namespace gapscope::capture::inject {

void installCrashTraceFromEnv();

} // namespace gapscope::capture::inject
