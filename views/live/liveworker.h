// SPDX-License-Identifier: MIT
#pragma once

// LiveWorker: the network side of a LiveSession, on its own thread. It connects to every agent
// (retrying with back-off while none answers), lists their ranks, starts the capture and runs
// capture::LiveCapture, which receives, merges (clock offsets per host) and hands each merged chunk
// to the LiveFeed (decoded right there, off the GUI thread). Everything else (progress, cut
// notices, errors, reconnects, the end) is posted to the session on the GUI thread as plain values.
// After the capture it stays for FetchFile requests, and when the capture ended because an agent
// went away, it keeps trying to reach the agents again (back-off) and reports when they answer.
//
// Threading: the constructor, stop(), quit(), fetch() and setStalled() are called on the GUI thread;
// everything else runs on the worker's thread. The thread owns the LiveCapture. The destructor asks
// the thread to quit and waits up to two seconds; a thread still blocked after that (an agent that
// never answers StopCapture) is left to finish on its own: it holds only shared state.

#include "capture/client/livecapture.h"
#include "model/io/livefeed.h"
#include "views/live/livestatus.h"

#include <QPointer>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

class LiveSession;

class LiveWorker {
public:
    struct Options {
        gapscope::capture::LiveCaptureOptions capture;
        double maxBackoffS = 5; // longest wait between connection attempts
        int maxAttempts = 0; // first connection: 0 = until stopped
    };

    LiveWorker(Options options, std::shared_ptr<gapscope::model::LiveFeed> feed, LiveSession* session);
    ~LiveWorker();

    void stop(); // StopCapture (or stop connecting); the agents finish their files
    // Downloads agent `agent`'s capture file to `path` (after its CaptureDone); posts the result.
    void fetch(int agent, const QString& path);
    // Test hook standing in for a viewer too slow to read: the thread stops reading its sockets.
    void setStalled(bool on);

    // Back-off before connection attempt `attempt` (1-based): 0.5 s doubling, capped.
    static double backoffS(int attempt, double maxS);

private:
    struct Shared;
    static void main(std::shared_ptr<Shared> s);
    std::shared_ptr<Shared> m_shared;
    std::thread m_thread;
};
