// SPDX-License-Identifier: MIT
#pragma once

// JobTracker: background work of the viewer, and the dropping of its stale results. run(owner, work,
// apply) is the one way a view starts a job: a new generation (every earlier ticket turns stale, its
// work cancelled through the ticket's CancelToken), work(ticket) on jobPool(), and apply(owner,
// result) back on the GUI thread, only while `owner` lives and the ticket is still current (the user
// has asked for nothing newer); a result that arrives stale goes to `drop` (default: destroyed where it
// lands; TraceOpener::releaseLater for big ones). begin() alone hands out a ticket for work that runs
// elsewhere (the opener's own thread, a synchronous path).
//
// Threading: run() and begin() on the GUI thread; tickets are copied into worker threads;
// stale()/current() are lock-free and safe from any thread, and stay valid after the tracker is
// destroyed (they then read as stale).

#include "model/base/canceltoken.h"
#include "model/base/taskpool.h"

#include <QCoreApplication>
#include <QMetaObject>
#include <QPointer>

#include <atomic>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

// The pool the viewer's background jobs (opening, analysis, statistics, releasing traces) run on:
// the model's one TaskPool, so that the parallel work inside a job (decoding, the analysis) runs on
// the same threads instead of a second pool. Not QThreadPool::globalInstance(): Qt's raster paint
// engine splits large fills over the global pool and waits for them, so long jobs there would stall
// painting on the GUI thread.
gapscope::model::TaskPool* jobPool();

class JobTracker {
public:
    class Ticket {
    public:
        Ticket() = default;
        uint64_t id() const { return m_id; }
        bool stale() const;
        bool current() const { return !stale(); }
        // Cancelled once the ticket turns stale: hand it to model work (GapAnalyzer::Options) so
        // that superseded work stops instead of running to its end.
        const gapscope::model::CancelToken& cancelToken() const { return m_cancel; }

    private:
        friend class JobTracker;
        Ticket(std::shared_ptr<std::atomic<uint64_t>> gen, uint64_t id, gapscope::model::CancelToken cancel)
            : m_gen(std::move(gen))
            , m_id(id)
            , m_cancel(std::move(cancel))
        {
        }
        std::shared_ptr<std::atomic<uint64_t>> m_gen;
        uint64_t m_id = 0;
        gapscope::model::CancelToken m_cancel;
    };

    // What run() does with a stale result by default: nothing (it is destroyed with the last copy).
    struct Discard {
        template <typename R> void operator()(R&&) const { }
    };

    JobTracker();
    ~JobTracker();
    Ticket begin(); // a new generation; every earlier ticket turns stale
    void cancel(); // every ticket turns stale
    uint64_t generation() const { return m_gen->load(); }

    // Runs work(ticket) on jobPool(); then, on the GUI thread, apply(*owner, result) when `owner` still
    // lives and the ticket is current, else drop(result). `work` may return void (apply(*owner) then).
    // Returns the job's ticket.
    template <typename Owner, typename Work, typename Apply, typename Drop = Discard>
    Ticket run(Owner* owner, Work work, Apply apply, Drop drop = {})
    {
        Ticket ticket = begin();
        QPointer<Owner> self(owner);
        jobPool()->submit(
            [self, ticket, work = std::move(work), apply = std::move(apply), drop = std::move(drop)]() mutable {
                using R = std::invoke_result_t<Work&, const Ticket&>;
                if constexpr (std::is_void_v<R>) {
                    work(ticket);
                    QMetaObject::invokeMethod(
                        qApp,
                        [self, ticket, apply = std::move(apply)]() mutable {
                            if (self && ticket.current())
                                apply(*self);
                        },
                        Qt::QueuedConnection);
                } else {
                    auto result = std::make_shared<R>(work(ticket));
                    QMetaObject::invokeMethod(
                        qApp,
                        [self, ticket, result, apply = std::move(apply), drop = std::move(drop)]() mutable {
                            if (self && ticket.current())
                                apply(*self, std::move(*result));
                            else
                                drop(std::move(*result));
                        },
                        Qt::QueuedConnection);
                }
            });
        return ticket;
    }

private:
    std::shared_ptr<std::atomic<uint64_t>> m_gen;
    gapscope::model::CancelToken m_current; // the latest ticket's
};
