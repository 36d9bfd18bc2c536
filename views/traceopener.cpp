// SPDX-License-Identifier: MIT
#include "views/traceopener.h"

#include "model/memoryuse.h"

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
    const JobTracker::Ticket ticket = m_jobs.begin();
    m_busy = true;
    emit started(paths);
    QPointer<TraceOpener> self(this);
    // Progress from the worker: coalesced, at most one queued update every 30 ms.
    auto lastReport = std::make_shared<std::atomic<int64_t>>(0);
    Progress report = [self, ticket, lastReport](double fraction) {
        if (ticket.stale())
            return false;
        const int64_t now
            = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
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
    jobPool()->submit(
        [self, ticket, paths, open = std::move(open), prepare = std::move(prepare), report = std::move(report)] {
            auto result = std::make_shared<LoadedTrace>();
            result->paths = paths;
            QString error;
            QElapsedTimer timer;
            timer.start();
            gapscope::Expected<Trace> trace = open(report);
            result->openSeconds = timer.nsecsElapsed() / 1e9;
            if (!trace) {
                error = QString::fromStdString(trace.error());
            } else if (!ticket.stale()) {
                result->trace = std::make_shared<Trace>(std::move(trace).value());
                timer.restart();
                if (prepare)
                    prepare(*result, ticket);
                result->prepareSeconds = timer.nsecsElapsed() / 1e9;
            }
            // Posted to the application object (it outlives this loader); `self` is checked on arrival.
            QMetaObject::invokeMethod(
                qApp,
                [self, ticket, result, error] {
                    if (self)
                        self->finish(ticket, result, error);
                },
                Qt::QueuedConnection);
        });
}

void TraceOpener::finish(const JobTracker::Ticket& ticket, std::shared_ptr<LoadedTrace> result, QString error)
{
    if (ticket.stale()) {
        releaseLater(std::move(result)); // the user has asked for something newer
        return;
    }
    m_busy = false;
    if (!error.isEmpty() || !result->trace)
        emit failed(result->paths, error.isEmpty() ? tr("loading was canceled") : error);
    else
        emit loaded(std::move(result));
}
