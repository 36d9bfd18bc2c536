// SPDX-License-Identifier: MIT
#pragma once

// LiveSession: one live capture in the viewer. It owns the connection(s) (a LiveWorker: network and
// decoding on its own thread), the growing trace, and the follow state of the timeline.
//
//   agents --TCP--> LiveWorker (LiveCapture: merge, clock offsets; LiveFeed: decode) ---+
//   GUI thread, every appendIntervalMs (100): LiveFeed::drainInto(trace) -> timeline repaint,
//       follow mode keeps the newest step in view (until the user pans or zooms; End resumes);
//   every analysisIntervalMs (500) at most, and at most one at a time on jobPool(): an immutable
//       snapshot of the capture so far -> Workspace::setLiveSnapshot (waterfall, statistics);
//   at the end: a final snapshot becomes the workspace's document: a normal trace, saveAs() writes it.
//
// The analysis interval backs off to twice the time the last snapshot took, and no snapshot starts
// while the analysis of the previous one is still being built, so that a large capture never keeps
// the cores busy rebuilding snapshots. Progress and losses (agents' Progress,
// StreamCut, errors, reconnects) are kept in status() and announced by statusChanged().
//
// Invariants: the live trace is only mutated here, on the GUI thread, and only widgets that read
// it on the GUI thread (timeline, details) are given it; everything that reads on worker threads
// gets a snapshot. Threading: GUI thread.

#include "capture/client/livecapture.h"
#include "model/io/livefeed.h"
#include "views/common/jobtracker.h"
#include "views/document/tracedocument.h"
#include "views/live/livestatus.h"
#include "views/live/liveworker.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>

#include <memory>

class EventColors;
class QTimer;
class Workspace;

class LiveSession : public QObject {
    Q_OBJECT
public:
    explicit LiveSession(QObject* parent = nullptr);
    ~LiveSession() override;

    // Shows the capture in `workspace` (its timeline follows; analysis and statistics get snapshots).
    void attach(Workspace* workspace);
    // Connects (retrying with back-off while no agent answers) and captures with `options`. A new
    // capture starts a new trace.
    void start(const gapscope::capture::LiveCaptureOptions& options);
    // Asks the agents to stop early (their files stay valid), or stops connecting.
    void stop();
    // Captures again with the last options (after the end, a loss or an agent restart).
    void restart();

    const LiveStatus& status() const { return m_status; }
    const gapscope::capture::LiveCaptureOptions& options() const { return m_options; }
    // The trace as shown: growing while capturing; the final one afterwards.
    std::shared_ptr<const TraceDocument> document() const { return m_doc; }
    // The last snapshot given to the analysis (nullptr before the first).
    std::shared_ptr<const TraceDocument> snapshot() const { return m_snapshot; }
    bool finalReady() const { return m_final; }
    // The current capture's ticket, a new one with every start(): what an older worker still posts, and
    // an older capture's snapshot, is dropped.
    const JobTracker::Ticket& captureTicket() const { return m_capture; }

    bool follow() const { return m_follow; }
    void setFollow(bool on);

    // Writes the capture as a .gapscope file (the final trace, or a snapshot of what arrived so far);
    // "" on success, else the error.
    QString saveAs(const QString& path);
    // After a cut stream: downloads agent `agent`'s complete file to `path` (emits fetched()).
    void fetchAgentFile(int agent, const QString& path);

    void setAppendIntervalMs(int ms);
    void setAnalysisIntervalMs(int ms) { m_analysisMs = ms; }
    void setMaxBackoffS(double s) { m_maxBackoffS = s; }
    // Test hook: the worker stops reading from its sockets, like a viewer too slow to keep up.
    void setStalledForTest(bool on);

signals:
    void statusChanged();
    void traceGrew(quint64 newEvents);
    void followChanged(bool on);
    void snapshotApplied(bool final);
    void finished();
    void fetched(const QString& path, const QString& error);

private:
    // LiveWorker's signals (on the GUI thread).
    void onConnecting(int attempt, double retryInS, const QString& error);
    void onConnected(const QVector<LiveAgentInfo>& agents);
    void onStarted(int agent, quint64 captureId, const QString& outputPath, const gapscope::model::TraceHeader& header);
    void onProgress(int agent, const QString& phase, quint32 done, quint32 total, quint64 events, quint64 dropped);
    void onCut(int agent, const QString& reason, const QString& outputPath);
    void onAgentDone(int agent, bool ok, const QString& error, quint64 events, const QString& outputPath);
    void onError(int agent, const QString& message);
    void onReconnected(int agent, bool sameInstance, quint64 instance);
    void onRunEnded(bool ok, const QString& error, const gapscope::model::TraceHeader& header, bool lost);
    void onProbing(int attempt, double retryInS);
    void onReachable(const QVector<LiveAgentInfo>& agents);
    void onFailed(const QString& message);
    void onFetched(const QString& path, const QString& error);

private:
    void appendTick();
    void maybeSnapshot(bool final);
    void applySnapshot(const std::shared_ptr<const TraceDocument>& doc, bool final, qint64 tookMs);
    void applyFollow();
    void onViewChanged();
    void setPhase(LiveStatus::Phase phase, const QString& message);
    void resetTrace();

    QPointer<Workspace> m_workspace;
    gapscope::capture::LiveCaptureOptions m_options;
    std::unique_ptr<LiveWorker> m_worker;
    std::shared_ptr<gapscope::model::LiveFeed> m_feed;
    std::shared_ptr<gapscope::model::Trace> m_trace; // the growing trace (GUI thread)
    std::shared_ptr<EventColors> m_colors;
    size_t m_colorStrings = 0;
    std::shared_ptr<const TraceDocument> m_doc;
    std::shared_ptr<const TraceDocument> m_snapshot;
    gapscope::model::TraceHeader m_header;
    LiveStatus m_status;
    QVector<quint64> m_agentEvents;
    QVector<quint32> m_agentSteps;
    QVector<quint64> m_agentDropped;
    QTimer* m_appendTimer;
    int m_analysisMs = 500;
    double m_maxBackoffS = 5;
    bool m_snapshotRunning = false;
    bool m_snapshotAgain = false;
    bool m_final = false;
    bool m_runEnded = false;
    quint64 m_snapshotEvents = 0;
    qint64 m_lastSnapshotMs = 0;
    QElapsedTimer m_sinceSnapshot;
    JobTracker m_captures; // one ticket per capture
    JobTracker::Ticket m_capture;
    JobTracker m_snapshots;
    bool m_follow = true;
    bool m_applyingFollow = false;
    gapscope::model::TimeNs m_followT0 = 0, m_followT1 = 0;
    bool m_layoutDirty = false;
};
