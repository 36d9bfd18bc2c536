// SPDX-License-Identifier: MIT
#pragma once

// LiveStatus: what a LiveSession knows about its connection(s) and capture, as a plain value the
// live panel, the status bar and the tests read. Updated on the GUI thread only.

#include <QString>
#include <QStringList>
#include <QVector>

#include <cstdint>

// One rank as an agent lists it (ListRanks).
struct LiveRankInfo {
    int rank = -1;
    QString host;
    QString gpuName;
    QString gpuUuid;
    quint32 pid = 0;
    QString state; // "idle", "armed", "recording", "gone"
};

// One agent (host) feeding the capture.
struct LiveAgentInfo {
    QString address; // host:port as given
    QString host; // the agent's host name
    QString version;
    quint64 instanceId = 0; // random per agent start: a restart shows as a new id
    bool replay = false;
    QString replayFile;
    qint64 offsetNs = 0; // agent clock - this machine's clock (NTP-style ping/pong)
    double offsetErrorNs = 0; // bound on the offset's error (half the best round trip)
    qint64 shiftNs = 0; // added to this agent's event times (the first agent is the reference)
    QVector<LiveRankInfo> ranks;
    QString state; // "connected", "capturing", "done", "stream cut", "lost", "restarted"
    QString outputPath; // the agent's copy of the capture
    quint64 captureId = 0;
};

struct LiveStatus {
    enum class Phase {
        Idle, // nothing asked yet
        Connecting, // first connection, retrying with back-off
        Capturing, // capture started, stream arriving
        Reconnecting, // connection lost during the capture (agent restart, network)
        Finished, // every agent is done (the trace is complete, or the stream was cut)
        Lost, // the capture ended without completing (agent restarted or unreachable); data so far kept
        Failed, // refused (token, version, no ranks, busy): not retried
    };
    Phase phase = Phase::Idle;
    QString message; // one line for the status bar
    int attempt = 0; // connection attempts in the current (re)connect phase
    double retryInS = 0; // back-off until the next attempt
    int reconnects = 0; // times the connection came back

    QVector<LiveAgentInfo> agents;
    quint32 stepsDone = 0; // complete on every rank (the agents' Progress; minimum over agents)
    quint32 stepsTotal = 0;
    quint64 eventsAtAgent = 0; // events the agents recorded (Progress, summed)
    quint64 eventsReceived = 0; // decoded here
    quint64 eventsShown = 0; // appended to the viewer's trace
    quint64 bytesReceived = 0; // serialized chunk bytes
    quint64 droppedEvents = 0; // losses the agents and ranks reported (data_loss counters)
    bool cut = false; // an agent cut our stream (this viewer was too slow)
    QString cutReason;
    bool done = false;
    QStringList errors;

    static QString phaseName(Phase p)
    {
        switch (p) {
        case Phase::Idle:
            return QStringLiteral("idle");
        case Phase::Connecting:
            return QStringLiteral("connecting");
        case Phase::Capturing:
            return QStringLiteral("capturing");
        case Phase::Reconnecting:
            return QStringLiteral("reconnecting");
        case Phase::Finished:
            return QStringLiteral("finished");
        case Phase::Lost:
            return QStringLiteral("lost");
        case Phase::Failed:
            return QStringLiteral("failed");
        }
        return {};
    }
    bool active() const
    {
        return phase == Phase::Connecting || phase == Phase::Capturing || phase == Phase::Reconnecting;
    }
};
