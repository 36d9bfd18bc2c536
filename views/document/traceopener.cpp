// SPDX-License-Identifier: MIT
#include "views/document/traceopener.h"

#include "model/base/memoryuse.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QMetaObject>
#include <QPointer>

#include <atomic>
#include <chrono>

using gapscope::model::Trace;

TraceOpener::TraceOpener(QObject* parent)
    : QObject(parent)
{
}

TraceOpener::~TraceOpener()
{
    m_jobs.cancel();
}

void TraceOpener::cancel()
{
    if (!m_busy)
        return;
    m_jobs.cancel();
    m_busy = false;
    emit canceled();
}

void TraceOpener::releaseLater(std::shared_ptr<const void> p)
{
    if (!p)
        return;
    jobPool()->submit([p = std::move(p)]() mutable {
        p.reset();
        gapscope::model::releaseFreedMemory(); // a dropped window of a large file: back to the system
    });
}

void TraceOpener::load(const QStringList& paths, OpenFn open, PrepareFn prepare)
{
    m_busy = true;
    emit started(paths);
    using Loaded = std::pair<std::shared_ptr<LoadedTrace>, QString>; // the trace, or the error
    m_jobs.run(
        this,
        [self = QPointer<TraceOpener>(this), paths, open = std::move(open), prepare = std::move(prepare)](
            const JobTracker::Ticket& ticket) {
            // Progress from the worker: coalesced, at most one queued update every 30 ms.
            auto lastReport = std::make_shared<std::atomic<int64_t>>(0);
            Progress report = [self, ticket, lastReport](double fraction) {
                if (ticket.stale())
                    return false;
                const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now().time_since_epoch())
                                        .count();
                int64_t last = lastReport->load();
                if (now - last >= 30 && lastReport->compare_exchange_strong(last, now)) {
                    QMetaObject::invokeMethod(
                        qApp,
                        [self, ticket, fraction] {
                            if (self && ticket.current())
                                emit self->progress(fraction);
                        },
                        Qt::QueuedConnection);
                }
                return true;
            };
            Loaded r { std::make_shared<LoadedTrace>(), QString() };
            r.first->paths = paths;
            QElapsedTimer timer;
            timer.start();
            gapscope::Expected<Trace> trace = open(report);
            r.first->openSeconds = double(timer.nsecsElapsed()) / 1e9;
            if (!trace) {
                r.second = QString::fromStdString(trace.error());
            } else if (!ticket.stale()) {
                r.first->trace = std::make_shared<Trace>(std::move(trace).value());
                timer.restart();
                if (prepare)
                    prepare(*r.first, ticket);
                r.first->prepareSeconds = double(timer.nsecsElapsed()) / 1e9;
            }
            return r;
        },
        [](TraceOpener& self, Loaded r) { self.finish(std::move(r.first), r.second); },
        [](Loaded r) { releaseLater(std::move(r.first)); }); // the user has asked for something newer
}

void TraceOpener::finish(std::shared_ptr<LoadedTrace> result, const QString& error)
{
    m_busy = false;
    if (!error.isEmpty() || !result->trace)
        emit failed(result->paths, error.isEmpty() ? tr("loading was canceled") : error);
    else
        emit loaded(std::move(result));
}
