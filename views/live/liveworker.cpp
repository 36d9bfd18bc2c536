// SPDX-License-Identifier: MIT
#include "views/live/liveworker.h"

#include "capture/client/livesummary.h"

#include <QCoreApplication>

#include <algorithm>
#include <chrono>
#include <cmath>

using namespace gapscope;
using gapscope::capture::LiveCapture;

struct LiveWorker::Shared {
    Options opt;
    std::shared_ptr<model::LiveFeed> feed;
    QPointer<LiveWorker> worker; // gone: nothing more is emitted
    JobTracker::Ticket capture; // the session's capture this worker belongs to
    std::atomic<bool> stop { false }, quit { false }, stalled { false };
    std::mutex mutex;
    std::condition_variable cv;
    std::deque<std::function<void(LiveCapture&)>> commands;
    bool exited = false; // guarded by mutex

    // Runs fn(worker) on the GUI thread (fn emits one of its signals), unless the worker is gone by then or
    // its capture is no longer the session's.
    template <typename Fn> void post(Fn fn)
    {
        QPointer<LiveWorker> w = worker;
        QMetaObject::invokeMethod(
            qApp,
            [w, ticket = capture, fn = std::move(fn)]() mutable {
                if (w && ticket.current()) // not a newer capture of the same session
                    fn(*w);
            },
            Qt::QueuedConnection);
    }
    // Waits `seconds` unless asked to stop or quit first (then false).
    bool sleep(double seconds)
    {
        std::unique_lock<std::mutex> lock(mutex);
        return !cv.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return stop || quit; });
    }
};

namespace {

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

// Refusals that retrying cannot fix: the agent answered and said no (token, version), or the name
// does not resolve.
bool permanent(const std::string& message)
{
    return message.find("refused the connection:") != std::string::npos
        || message.find("cannot resolve") != std::string::npos;
}

// An agent as the live panel shows it.
LiveAgentInfo agentInfo(const capture::AgentSummary& a, const QString& state)
{
    LiveAgentInfo i;
    i.address = qs(a.address);
    i.host = qs(a.host);
    i.version = qs(a.version);
    i.instanceId = a.instanceId;
    i.replay = a.replay;
    i.replayFile = qs(a.replayFile);
    i.offsetNs = a.offsetNs;
    i.offsetErrorNs = a.offsetErrorNs;
    i.shiftNs = a.shiftNs;
    i.captureId = a.captureId;
    i.state = state;
    for (const auto& r : a.ranks) {
        LiveRankInfo ri;
        ri.rank = r.rank;
        ri.host = qs(r.host);
        ri.gpuName = qs(r.gpuName);
        ri.gpuUuid = qs(r.gpuUuid);
        ri.pid = r.pid;
        ri.state = qs(r.state);
        i.ranks.push_back(ri);
    }
    return i;
}

QVector<LiveAgentInfo> agentInfos(const std::vector<capture::AgentSummary>& agents, const QString& state)
{
    QVector<LiveAgentInfo> out;
    for (const auto& a : agents)
        out.push_back(agentInfo(a, state));
    return out;
}

// What the capture reports, to the GUI thread as the worker's signals.
class Forwarder final : public capture::LiveEvents {
public:
    Forwarder(LiveCapture& lc, std::function<void(std::function<void(LiveWorker&)>)> post)
        : m_lc(lc)
        , m_post(std::move(post))
    {
    }
    void started(size_t i, uint64_t id, const std::string& outputPath) override
    {
        model::TraceHeader h = model::LiveFeed::header(m_lc.mergedHeader(false));
        m_post([i, id, path = qs(outputPath), h](LiveWorker& w) { emit w.started(int(i), id, path, h); });
    }
    void progress(
        size_t i, const std::string& phase, uint32_t done, uint32_t total, uint64_t events, uint64_t dropped) override
    {
        m_post([i, phase = qs(phase), done, total, events, dropped](
                   LiveWorker& w) { emit w.progress(int(i), phase, done, total, events, dropped); });
    }
    void streamCut(size_t i, const std::string& reason, const std::string& outputPath) override
    {
        m_post([i, reason = qs(reason), path = qs(outputPath)](LiveWorker& w) { emit w.cut(int(i), reason, path); });
    }
    void done(size_t i, bool ok, const std::string& error, uint64_t events, const std::string& outputPath) override
    {
        m_post([i, ok, err = qs(error), events, path = qs(outputPath)](
                   LiveWorker& w) { emit w.agentDone(int(i), ok, err, events, path); });
    }
    void error(size_t i, const std::string& message) override
    {
        m_post([i, m = qs(message)](LiveWorker& w) { emit w.agentError(int(i), m); });
    }
    void reconnected(size_t i, bool same, uint64_t instance) override
    {
        m_post([i, same, instance](LiveWorker& w) { emit w.reconnected(int(i), same, instance); });
    }

private:
    LiveCapture& m_lc;
    std::function<void(std::function<void(LiveWorker&)>)> m_post;
};

} // namespace

LiveWorker::LiveWorker(Options options, std::shared_ptr<model::LiveFeed> feed, JobTracker::Ticket capture)
    : m_shared(std::make_shared<Shared>())
{
    m_shared->opt = std::move(options);
    m_shared->feed = std::move(feed);
    m_shared->worker = this;
    m_shared->capture = std::move(capture);
    m_thread = std::thread(&LiveWorker::main, m_shared);
}

LiveWorker::~LiveWorker()
{
    {
        std::unique_lock<std::mutex> lock(m_shared->mutex);
        m_shared->stop = true;
        m_shared->quit = true;
        m_shared->cv.notify_all();
        m_shared->cv.wait_for(lock, std::chrono::seconds(2), [this] { return m_shared->exited; });
    }
    if (m_thread.joinable()) {
        std::unique_lock<std::mutex> lock(m_shared->mutex);
        const bool exited = m_shared->exited;
        lock.unlock();
        if (exited)
            m_thread.join();
        else
            m_thread.detach(); // blocked on an agent that does not answer; it holds only shared state
    }
}

double LiveWorker::backoffS(int attempt, double maxS)
{
    return std::min(maxS, 0.5 * std::pow(2.0, std::max(0, attempt - 1)));
}

void LiveWorker::setStalled(bool on)
{
    m_shared->stalled = on;
}

void LiveWorker::stop()
{
    std::lock_guard<std::mutex> lock(m_shared->mutex);
    m_shared->stop = true;
    m_shared->cv.notify_all();
}

void LiveWorker::fetch(int agent, const QString& path)
{
    std::lock_guard<std::mutex> lock(m_shared->mutex);
    std::shared_ptr<Shared> s = m_shared;
    m_shared->commands.push_back([s, agent, path](LiveCapture& lc) {
        Status st = agent >= 0 && size_t(agent) < lc.agents().size()
            ? lc.fetchFile(size_t(agent), path.toStdString())
            : Status::error("no agent " + std::to_string(agent));
        s->post([path, err = st ? QString() : qs(st.message())](LiveWorker& w) { emit w.fetched(path, err); });
    });
    m_shared->cv.notify_all();
}

namespace {

std::unique_ptr<LiveCapture> connectWithBackoff(LiveWorker::Options& opt, const std::atomic<bool>& stop,
    const std::function<bool(double)>& sleep, const std::function<void(std::function<void(LiveWorker&)>)>& post)
{
    for (int attempt = 1;; ++attempt) {
        if (stop)
            return nullptr;
        auto lc = std::make_unique<LiveCapture>(opt.capture);
        const Status st = lc->connect();
        if (st)
            return lc;
        const std::string& m = st.message();
        if (permanent(m) || (opt.maxAttempts > 0 && attempt >= opt.maxAttempts)) {
            post([msg = qs(m)](LiveWorker& w) { emit w.failed(msg); });
            return nullptr;
        }
        const double delay = LiveWorker::backoffS(attempt, opt.maxBackoffS);
        post([attempt, delay, msg = qs(m)](LiveWorker& w) { emit w.connecting(attempt, delay, msg); });
        if (!sleep(delay))
            return nullptr;
    }
}

} // namespace

void LiveWorker::main(std::shared_ptr<Shared> s)
{
    auto post = [s](std::function<void(LiveWorker&)> fn) { s->post(std::move(fn)); };
    auto sleep = [s](double seconds) { return s->sleep(seconds); };
    std::unique_ptr<LiveCapture> lc = connectWithBackoff(s->opt, s->stop, sleep, post);
    if (!lc) {
        if (s->stop)
            post([](LiveWorker& w) { emit w.failed(QStringLiteral("connection cancelled")); });
        std::lock_guard<std::mutex> lock(s->mutex);
        s->exited = true;
        s->cv.notify_all();
        return;
    }
    post([infos = agentInfos(capture::connectedAgents(*lc), QStringLiteral("connected"))](
             LiveWorker& w) { emit w.connected(infos); });
    Status st = lc->start();
    if (st) {
        // Chunks go to the feed on this thread (decoded right there); the rest to the GUI thread.
        Forwarder f(*lc, post);
        capture::LiveEventAdapter adapter(*lc, f, [s](const auto& chunk) {
            while (s->stalled && !s->quit)
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            (void)s->feed->add(chunk); // a rejected chunk is counted and named in the trace's warnings
        });
        st = lc->run(adapter, &s->stop);
    }
    s->feed->flush(); // every chunk decoded before the session hears of the end
    bool lost = false, refused = false;
    for (const auto& a : lc->agents()) {
        lost = lost || (a->failed && !a->done && a->captureId != 0);
        refused = refused || (a->failed && a->captureId == 0);
    }
    model::TraceHeader h = model::LiveFeed::header(lc->mergedHeader(true));
    post([ok = st.isOk(), err = st ? QString() : qs(st.message()), h, lost](
             LiveWorker& w) { emit w.runEnded(ok, err, h, lost); });
    // The capture ended because an agent went away: find it again (it may be restarting).
    for (int attempt = 1; lost && !refused && !s->quit; ++attempt) {
        if (auto back = capture::probeAgents(s->opt.capture, 1000)) {
            post([infos = agentInfos(*back, QStringLiteral("reachable"))](LiveWorker& w) { emit w.reachable(infos); });
            break;
        }
        const double delay = backoffS(attempt, s->opt.maxBackoffS);
        post([attempt, delay](LiveWorker& w) { emit w.probing(attempt, delay); });
        if (!sleep(delay))
            break;
    }
    // Then serve FetchFile requests until the session goes away.
    std::unique_lock<std::mutex> lock(s->mutex);
    while (!s->quit) {
        s->cv.wait(lock, [&] { return s->quit || !s->commands.empty(); });
        while (!s->commands.empty() && !s->quit) {
            auto cmd = std::move(s->commands.front());
            s->commands.pop_front();
            lock.unlock();
            cmd(*lc);
            lock.lock();
        }
    }
    s->exited = true;
    s->cv.notify_all();
}
