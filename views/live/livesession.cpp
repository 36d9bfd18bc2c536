// SPDX-License-Identifier: MIT
#include "views/live/livesession.h"

#include "model/analysis/kernelranges.h"
#include "model/open/traceopen.h"
#include "model/trace/kernelclassifier.h"
#include "views/common/eventcolors.h"
#include "views/common/jobtracker.h"
#include "views/document/traceopener.h"
#include "views/document/workspace.h"
#include "views/timeline/timelinewidget.h"

#include <QCoreApplication>
#include <QTimer>

#include <algorithm>

using namespace gapscope;
using namespace gapscope::model;

namespace {

std::string classify(const KernelClassifier& c, std::string_view name)
{
    const int k = c.classify(name);
    return k >= 0 ? c.classes()[size_t(k)].name : std::string();
}

// The snapshot's document: the trace and its colours, prepared off the GUI thread.
std::shared_ptr<const TraceDocument> makeDocument(Trace trace, const QString& name)
{
    return TraceDocument::fromTrace(std::move(trace), name);
}

QString countText(quint64 v)
{
    if (v >= 1000000)
        return QStringLiteral("%1M").arg(double(v) / 1e6, 0, 'f', 2);
    if (v >= 10000)
        return QStringLiteral("%1k").arg(double(v) / 1e3, 0, 'f', 1);
    return QString::number(v);
}

} // namespace

LiveSession::LiveSession(QObject* parent)
    : QObject(parent)
    , m_appendTimer(new QTimer(this))
{
    m_appendTimer->setInterval(100);
    connect(m_appendTimer, &QTimer::timeout, this, &LiveSession::appendTick);
}

LiveSession::~LiveSession()
{
    m_worker.reset(); // stops the thread first: its signals come into this object
    TraceOpener::releaseLater(std::move(m_snapshot));
}

void LiveSession::attach(Workspace* workspace)
{
    if (m_workspace)
        disconnect(m_workspace->timeline(), nullptr, this, nullptr);
    m_workspace = workspace;
    if (!m_workspace)
        return;
    connect(m_workspace->timeline(), &TimelineWidget::viewChanged, this, &LiveSession::onViewChanged);
    if (m_doc)
        m_workspace->setLiveDocument(m_doc);
}

void LiveSession::setAppendIntervalMs(int ms)
{
    m_appendTimer->setInterval(std::max(10, ms));
}

void LiveSession::resetTrace()
{
    m_trace = std::make_shared<Trace>();
    m_colors = std::make_shared<EventColors>();
    m_colorStrings = 0;
    TraceDocument doc;
    doc.paths = QStringList { QStringLiteral("live capture") };
    doc.trace = m_trace;
    doc.colors = m_colors;
    m_doc = std::make_shared<const TraceDocument>(std::move(doc));
    TraceOpener::releaseLater(std::move(m_snapshot));
    m_snapshot.reset();
    m_final = false;
    m_runEnded = false;
    m_snapshotEvents = 0;
    m_lastSnapshotMs = 0;
    m_sinceSnapshot.invalidate();
    m_capture = m_captures.begin();
    m_snapshots.cancel();
    m_header = {};
    if (m_workspace)
        m_workspace->setLiveDocument(m_doc);
}

void LiveSession::start(const capture::LiveCaptureOptions& options)
{
    m_worker.reset();
    m_options = options;
    if (m_options.clientName.empty() || m_options.clientName == "gapscope-client")
        m_options.clientName = "gapscope";
    m_feed = std::make_shared<model::LiveFeed>(true, true); // decoded on a thread of its own
    resetTrace();
    m_status = LiveStatus {};
    m_agentEvents.fill(0, int(m_options.agents.size()));
    m_agentSteps.fill(0, int(m_options.agents.size()));
    m_agentDropped.fill(0, int(m_options.agents.size()));
    for (const auto& a : m_options.agents) {
        LiveAgentInfo info;
        info.address = QString::fromStdString(a);
        info.state = tr("connecting");
        m_status.agents.push_back(info);
    }
    setFollow(true);
    setPhase(LiveStatus::Phase::Connecting, tr("Connecting to %1…").arg(m_status.agents.value(0).address));
    LiveWorker::Options wo;
    wo.capture = m_options;
    wo.maxBackoffS = m_maxBackoffS;
    m_worker = std::make_unique<LiveWorker>(wo, m_feed, m_capture);
    const LiveWorker* w = m_worker.get();
    connect(w, &LiveWorker::connecting, this, &LiveSession::onConnecting);
    connect(w, &LiveWorker::connected, this, &LiveSession::onConnected);
    connect(w, &LiveWorker::started, this, &LiveSession::onStarted);
    connect(w, &LiveWorker::progress, this, &LiveSession::onProgress);
    connect(w, &LiveWorker::cut, this, &LiveSession::onCut);
    connect(w, &LiveWorker::agentDone, this, &LiveSession::onAgentDone);
    connect(w, &LiveWorker::agentError, this, &LiveSession::onError);
    connect(w, &LiveWorker::reconnected, this, &LiveSession::onReconnected);
    connect(w, &LiveWorker::runEnded, this, &LiveSession::onRunEnded);
    connect(w, &LiveWorker::probing, this, &LiveSession::onProbing);
    connect(w, &LiveWorker::reachable, this, &LiveSession::onReachable);
    connect(w, &LiveWorker::failed, this, &LiveSession::onFailed);
    connect(w, &LiveWorker::fetched, this, &LiveSession::onFetched);
    m_appendTimer->start();
}

void LiveSession::restart()
{
    start(m_options);
}

void LiveSession::stop()
{
    if (m_worker && m_status.active()) {
        m_worker->stop();
        m_status.message = tr("Stopping: the agents finish their files…");
        emit statusChanged();
    }
}

void LiveSession::setStalledForTest(bool on)
{
    if (m_worker)
        m_worker->setStalled(on);
}

void LiveSession::setPhase(LiveStatus::Phase phase, const QString& message)
{
    m_status.phase = phase;
    m_status.message = message;
    emit statusChanged();
}

// ---------------------------------------------------------------------------------------------
// From the worker

void LiveSession::onConnecting(int attempt, double retryInS, const QString& error)
{
    m_status.attempt = attempt;
    m_status.retryInS = retryInS;
    setPhase(LiveStatus::Phase::Connecting,
        tr("No agent answered (%1); retrying in %2 s (attempt %3)").arg(error).arg(retryInS, 0, 'f', 1).arg(attempt));
}

void LiveSession::onConnected(const QVector<LiveAgentInfo>& agents)
{
    m_status.agents = agents;
    m_status.attempt = 0;
    m_status.retryInS = 0;
    QStringList hosts;
    for (const auto& a : agents)
        hosts << (a.host.isEmpty() ? a.address : a.host);
    setPhase(LiveStatus::Phase::Capturing, tr("Connected to %1; starting the capture…").arg(hosts.join(", ")));
}

void LiveSession::onStarted(int agent, quint64 captureId, const QString& outputPath, const model::TraceHeader& header)
{
    if (agent < m_status.agents.size()) {
        m_status.agents[agent].captureId = captureId;
        m_status.agents[agent].outputPath = outputPath;
        m_status.agents[agent].state = tr("capturing");
    }
    m_header = header;
    m_trace->mutableHeader() = header;
    setPhase(LiveStatus::Phase::Capturing, tr("Capturing"));
}

void LiveSession::onProgress(
    int agent, const QString& phase, quint32 done, quint32 total, quint64 events, quint64 dropped)
{
    if (agent < 0 || agent >= m_agentEvents.size())
        return;
    m_agentEvents[agent] = events;
    m_agentSteps[agent] = done;
    m_agentDropped[agent] = dropped;
    m_status.eventsAtAgent = 0;
    m_status.droppedEvents = 0;
    m_status.stepsDone = UINT32_MAX;
    for (int i = 0; i < m_agentEvents.size(); ++i) {
        m_status.eventsAtAgent += m_agentEvents[i];
        m_status.droppedEvents += m_agentDropped[i];
        m_status.stepsDone = std::min(m_status.stepsDone, m_agentSteps[i]);
    }
    m_status.stepsTotal = total;
    if (agent < m_status.agents.size() && !m_status.agents[agent].state.contains(QLatin1String("cut")))
        m_status.agents[agent].state = phase;
    emit statusChanged();
}

void LiveSession::onCut(int agent, const QString& reason, const QString& outputPath)
{
    m_status.cut = true;
    m_status.cutReason = reason;
    if (agent < m_status.agents.size()) {
        m_status.agents[agent].state = tr("stream cut");
        if (!outputPath.isEmpty())
            m_status.agents[agent].outputPath = outputPath;
    }
    m_status.errors << tr("%1 cut the live stream (%2); the capture goes on and its file on the agent is complete")
                           .arg(m_status.agents.value(agent).address, reason);
    m_status.message = m_status.errors.back();
    emit statusChanged();
}

void LiveSession::onAgentDone(int agent, bool ok, const QString& error, quint64 events, const QString& outputPath)
{
    if (agent < m_status.agents.size()) {
        auto& a = m_status.agents[agent];
        a.state = ok ? (a.state == tr("stream cut") ? tr("done (stream cut)") : tr("done")) : tr("failed");
        a.outputPath = outputPath;
    }
    if (agent >= 0 && agent < m_agentEvents.size())
        m_agentEvents[agent] = events;
    if (!ok)
        m_status.errors << tr("%1: capture failed: %2").arg(m_status.agents.value(agent).address, error);
    emit statusChanged();
}

void LiveSession::onError(int agent, const QString& message)
{
    m_status.errors << message;
    const bool connection = message.contains(QLatin1String("closed the connection"))
        || message.contains(QLatin1String("not connected")) || message.contains(QLatin1String("reset"));
    if (connection && m_status.phase == LiveStatus::Phase::Capturing) {
        if (agent < m_status.agents.size())
            m_status.agents[agent].state = tr("reconnecting");
        setPhase(LiveStatus::Phase::Reconnecting, tr("Connection lost (%1); reconnecting…").arg(message));
        return;
    }
    if (message.contains(QLatin1String("the agent restarted")) && agent < m_status.agents.size())
        m_status.agents[agent].state = tr("restarted");
    m_status.message = message;
    emit statusChanged();
}

void LiveSession::onReconnected(int agent, bool sameInstance, quint64 instance)
{
    ++m_status.reconnects;
    if (agent < m_status.agents.size()) {
        m_status.agents[agent].instanceId = instance;
        m_status.agents[agent].state = sameInstance ? tr("capturing") : tr("restarted");
    }
    if (sameInstance)
        setPhase(LiveStatus::Phase::Capturing, tr("Reconnected; following the capture again"));
    else
        emit statusChanged();
}

void LiveSession::onRunEnded(bool ok, const QString& error, const model::TraceHeader& header, bool lost)
{
    m_runEnded = true;
    m_header = header;
    m_status.done = ok;
    appendTick(); // the last events
    m_trace->mutableHeader() = header;
    const QString events = countText(m_status.eventsReceived);
    if (ok && m_status.cut)
        setPhase(LiveStatus::Phase::Finished,
            tr("Capture done, but the live stream was cut (this viewer was too slow): %1 events shown; the "
               "agent's file is complete (Live > Fetch the agent's file)")
                .arg(events));
    else if (ok)
        setPhase(LiveStatus::Phase::Finished, tr("Capture done: %1 events").arg(events));
    else if (lost)
        setPhase(LiveStatus::Phase::Lost,
            tr("The capture ended early (%1); the %2 events received are kept").arg(error, events));
    else
        setPhase(LiveStatus::Phase::Failed, error);
    maybeSnapshot(true);
    m_appendTimer->stop();
    emit finished();
}

void LiveSession::onProbing(int attempt, double retryInS)
{
    m_status.attempt = attempt;
    m_status.retryInS = retryInS;
    m_status.message
        = tr("Waiting for the agent to come back; retrying in %1 s (attempt %2)").arg(retryInS, 0, 'f', 1).arg(attempt);
    emit statusChanged();
}

void LiveSession::onReachable(const QVector<LiveAgentInfo>& agents)
{
    ++m_status.reconnects;
    for (int i = 0; i < agents.size() && i < m_status.agents.size(); ++i) {
        const bool restarted = agents[i].instanceId != m_status.agents[i].instanceId;
        m_status.agents[i].instanceId = agents[i].instanceId;
        m_status.agents[i].ranks = agents[i].ranks;
        m_status.agents[i].state = restarted ? tr("restarted, reachable") : tr("reachable");
    }
    m_status.attempt = 0;
    m_status.retryInS = 0;
    m_status.message = tr("The agent is back: Live > Capture again starts a new capture (the %1 events received are "
                          "kept in this trace)")
                           .arg(countText(m_status.eventsReceived));
    emit statusChanged();
}

void LiveSession::onFailed(const QString& message)
{
    QString text = message;
    if (message.contains(QLatin1String("token")))
        text += tr(" — give the token (or the token file) the agent was started with");
    m_status.errors << text;
    m_appendTimer->stop();
    setPhase(LiveStatus::Phase::Failed, text);
    emit finished();
}

void LiveSession::onFetched(const QString& path, const QString& error)
{
    emit fetched(path, error);
}

// ---------------------------------------------------------------------------------------------
// The model side

void LiveSession::appendTick()
{
    if (!m_feed || !m_trace || m_final)
        return;
    const size_t lanes = m_trace->laneCount();
    const uint64_t moved = m_feed->drainInto(*m_trace);
    const auto stats = m_feed->stats();
    m_status.eventsReceived = stats.events;
    m_status.bytesReceived = stats.bytes;
    m_status.eventsShown = m_trace->eventCount();
    if (moved == 0 && lanes == m_trace->laneCount()) {
        maybeSnapshot(false);
        return;
    }
    if (m_trace->stringCount() != m_colorStrings) {
        const KernelClassifier& classifier = KernelClassifier::builtinDefault();
        m_colors->build(*m_trace, [&classifier](std::string_view n) { return classify(classifier, n); });
        m_colorStrings = m_trace->stringCount();
    }
    if (m_workspace && m_workspace->document() == m_doc.get()) {
        m_workspace->liveTraceGrew();
        if (m_follow)
            applyFollow();
    }
    emit traceGrew(moved);
    emit statusChanged();
    maybeSnapshot(false);
}

void LiveSession::maybeSnapshot(bool final)
{
    if (!m_feed || m_final)
        return;
    if (m_snapshotRunning) {
        m_snapshotAgain = m_snapshotAgain || final;
        return;
    }
    const quint64 events = m_feed->stats().events;
    if (!final) {
        const qint64 wait = std::max<qint64>(m_analysisMs, 2 * m_lastSnapshotMs);
        if (events == m_snapshotEvents || (m_sinceSnapshot.isValid() && m_sinceSnapshot.elapsed() < wait))
            return;
        // The analysis of the last snapshot is still being built: a newer one would only cancel it.
        if (m_workspace && m_workspace->document() == m_doc.get() && m_workspace->analysis()->busy())
            return;
    }
    m_snapshotRunning = true;
    m_snapshotEvents = events;
    auto chunks = m_feed->chunks();
    model::TraceHeader header = m_header;
    for (const auto& c : m_feed->counters())
        header.counters.push_back(c);
    using Snapshot = std::pair<std::shared_ptr<const TraceDocument>, qint64>; // the document, the ms it took
    m_snapshots.run(
        this,
        [chunks = std::move(chunks), header = std::move(header), final](const JobTracker::Ticket&) {
            QElapsedTimer t;
            t.start();
            auto trace = model::LiveFeed::snapshot(chunks, header);
            if (trace && trace->eventCount() > 0) // the steps the stream carried, else found (as openTrace does)
                (void)model::findSteps(*trace, {});
            // The final snapshot becomes the document: its replays grouped by range, as an opened file's.
            if (trace && final)
                model::addReplayRangeLanes(*trace);
            std::shared_ptr<const TraceDocument> doc;
            if (trace)
                doc = makeDocument(std::move(*trace), QStringLiteral("live capture"));
            return Snapshot { std::move(doc), t.elapsed() };
        },
        [final](LiveSession& self, const Snapshot& r) { self.applySnapshot(r.first, final, r.second); },
        [](Snapshot r) { TraceOpener::releaseLater(std::move(r.first)); });
}

void LiveSession::applySnapshot(const std::shared_ptr<const TraceDocument>& doc, bool final, qint64 tookMs)
{
    m_snapshotRunning = false;
    m_lastSnapshotMs = tookMs;
    m_sinceSnapshot.start();
    if (doc) {
        const bool shown = m_workspace && m_workspace->document() == m_doc.get();
        TraceOpener::releaseLater(std::move(m_snapshot));
        m_snapshot = doc;
        if (final) {
            m_final = true;
            std::shared_ptr<const TraceDocument> old = std::move(m_doc);
            m_doc = doc;
            m_trace.reset();
            TraceOpener::releaseLater(std::move(old));
            m_feed->dropChunks(); // the final trace holds everything now
        }
        if (shown) {
            m_applyingFollow = true; // a final snapshot keeps the view; it is not the user moving it
            m_workspace->setLiveSnapshot(doc, final);
            m_applyingFollow = false;
        }
        emit snapshotApplied(final);
    }
    if (m_snapshotAgain) {
        m_snapshotAgain = false;
        maybeSnapshot(true);
    }
}

// ---------------------------------------------------------------------------------------------
// Follow mode

void LiveSession::setFollow(bool on)
{
    if (m_follow == on)
        return;
    m_follow = on;
    if (on && m_workspace && m_workspace->document() == m_doc.get())
        applyFollow();
    emit followChanged(on);
}

void LiveSession::applyFollow()
{
    const Trace* t = m_doc ? m_doc->trace.get() : nullptr;
    if (!t || t->eventCount() == 0)
        return;
    // The newest step (highest index) over all ranks, from its earliest start to the latest event.
    uint32_t newest = 0;
    bool any = false;
    for (uint32_t r : t->ranks())
        if (!t->steps(r).empty() && (!any || t->steps(r).back().index > newest)) {
            newest = t->steps(r).back().index;
            any = true;
        }
    TimeNs t0 = t->endTime(), t1 = t->endTime();
    if (any) {
        for (uint32_t r : t->ranks())
            for (auto it = t->steps(r).rbegin(); it != t->steps(r).rend(); ++it)
                if (it->index == newest) {
                    t0 = std::min(t0, it->start);
                    t1 = std::max(t1, it->end);
                    break;
                }
    }
    if (!any || t1 - t0 <= 0)
        t0 = std::max(t->startTime(), t1 - 50'000'000); // no steps (yet): the last 50 ms
    m_applyingFollow = true;
    m_workspace->timeline()->zoomToRange(t0, t1, 0.02);
    m_applyingFollow = false;
    m_followT0 = m_workspace->timeline()->view().mapping.firstVisible();
    m_followT1 = m_workspace->timeline()->view().mapping.lastVisible();
}

void LiveSession::onViewChanged()
{
    if (m_applyingFollow || !m_follow || !m_workspace)
        return;
    const TimeMapping& m = m_workspace->timeline()->view().mapping;
    const double slack = 2 * m.nsPerPixel;
    // Scrolling the lanes up and down keeps following; moving or zooming in time stops it.
    if (std::abs(double(m.firstVisible() - m_followT0)) > slack
        || std::abs(double(m.lastVisible() - m_followT1)) > slack)
        setFollow(false);
}

// ---------------------------------------------------------------------------------------------
// Saving and fetching

QString LiveSession::saveAs(const QString& path)
{
    std::shared_ptr<const TraceDocument> doc = m_final ? m_doc : nullptr;
    Trace partial;
    if (!doc) {
        if (!m_feed)
            return tr("Nothing was captured");
        model::TraceHeader header = m_header;
        for (const auto& c : m_feed->counters())
            header.counters.push_back(c);
        auto t = model::LiveFeed::snapshot(m_feed->chunks(), header);
        if (!t)
            return QString::fromStdString(t.error());
        partial = std::move(*t);
    }
    const Trace& trace = doc ? *doc->trace : partial;
    if (Status s = TraceDocument::save(trace, path); !s)
        return QString::fromStdString(s.message());
    return {};
}

void LiveSession::fetchAgentFile(int agent, const QString& path)
{
    if (!m_worker) {
        emit fetched(path, tr("No capture"));
        return;
    }
    m_worker->fetch(agent, path);
}
