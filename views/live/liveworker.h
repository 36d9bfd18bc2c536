// SPDX-License-Identifier: MIT
#pragma once

// LiveWorker: the network side of a LiveSession, on its own thread. It connects to every agent
// (retrying with back-off while none answers), lists their ranks, starts the capture and runs
// capture::LiveCapture, which receives, merges (clock offsets per host) and hands each merged chunk
// to the LiveFeed (decoded right there, off the GUI thread). Everything else (progress, cut
// notices, errors, reconnects, the end) reaches the GUI thread as this object's signals, with plain values
// (LiveSession connects them); nothing is emitted once the object is gone or the capture's ticket is stale.
// After the capture it stays for FetchFile requests, and when the capture ended because an agent
// went away, it keeps trying to reach the agents again (back-off) and reports when they answer.
//
// Threading: the constructor, stop(), quit(), fetch() and setStalled() are called on the GUI thread;
// everything else runs on the worker's thread. The thread owns the LiveCapture. The destructor asks
// the thread to quit and waits up to two seconds; a thread still blocked after that (an agent that
// never answers StopCapture) is left to finish on its own: it holds only shared state.

#include "capture/client/livecapture.h"
#include "model/io/livefeed.h"
#include "views/common/jobtracker.h"
#include "views/live/livestatus.h"

#include <QObject>
#include <QPointer>
#include <QString>
#include <QVector>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

class LiveWorker : public QObject {
    Q_OBJECT
public:
    struct Options {
        gapscope::capture::LiveCaptureOptions capture;
        double maxBackoffS = 5; // longest wait between connection attempts
        int maxAttempts = 0; // first connection: 0 = until stopped
    };

    // `capture`: the ticket of the capture this worker serves (LiveSession::captureTicket()).
    LiveWorker(Options options, std::shared_ptr<gapscope::model::LiveFeed> feed, JobTracker::Ticket capture);
    ~LiveWorker() override;

    void stop(); // StopCapture (or stop connecting); the agents finish their files
    // Downloads agent `agent`'s capture file to `path` (after its CaptureDone); fetched() says how it went.
    void fetch(int agent, const QString& path);
    // Test hook standing in for a viewer too slow to read: the thread stops reading its sockets.
    void setStalled(bool on);

    // Back-off before connection attempt `attempt` (1-based): 0.5 s doubling, capped.
    static double backoffS(int attempt, double maxS);

signals:
    void connecting(int attempt, double retryInS, const QString& error);
    void connected(const QVector<LiveAgentInfo>& agents);
    void started(int agent, quint64 captureId, const QString& outputPath, const gapscope::model::TraceHeader& header);
    void progress(int agent, const QString& phase, quint32 done, quint32 total, quint64 events, quint64 dropped);
    void cut(int agent, const QString& reason, const QString& outputPath);
    void agentDone(int agent, bool ok, const QString& error, quint64 events, const QString& outputPath);
    void agentError(int agent, const QString& message);
    void reconnected(int agent, bool sameInstance, quint64 instance);
    void runEnded(bool ok, const QString& error, const gapscope::model::TraceHeader& header, bool lost);
    void probing(int attempt, double retryInS);
    void reachable(const QVector<LiveAgentInfo>& agents);
    void failed(const QString& message);
    void fetched(const QString& path, const QString& error);

private:
    struct Shared;
    static void main(std::shared_ptr<Shared> s);
    std::shared_ptr<Shared> m_shared;
    std::thread m_thread;
};
