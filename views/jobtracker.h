// SPDX-License-Identifier: MIT
#pragma once

// JobTracker: drops stale results of background work. Each begin() starts a new generation and
// returns a ticket; a worker checks ticket.stale() to stop early, and the GUI thread ignores any
// result whose ticket is no longer current (the user has asked for something newer since).
//
// Threading: tickets are copied into worker threads; stale()/current() are lock-free and safe from
// any thread, and stay valid after the tracker is destroyed (they then read as stale).

#include "model/canceltoken.h"
#include "model/taskpool.h"

#include <atomic>
#include <cstdint>
#include <memory>

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

    JobTracker();
    ~JobTracker();
    Ticket begin(); // a new generation; every earlier ticket turns stale
    void cancel(); // every ticket turns stale
    uint64_t generation() const { return m_gen->load(); }

private:
    std::shared_ptr<std::atomic<uint64_t>> m_gen;
    gapscope::model::CancelToken m_current; // the latest ticket's
};
