// SPDX-License-Identifier: MIT
// JobTracker: a newer job makes older tickets stale, also across threads and after destruction.
#include "views/jobtracker.h"

#include <QTest>

#include <atomic>
#include <thread>

class TstJobTracker : public QObject {
    Q_OBJECT
private slots:
    void newerJobMakesOlderStale();
    void cancel();
    void outlivesTracker();
    void workerSeesCancellation();
};

void TstJobTracker::newerJobMakesOlderStale()
{
    JobTracker t;
    const auto a = t.begin();
    QVERIFY(a.current());
    const auto b = t.begin();
    QVERIFY(a.stale());
    QVERIFY(b.current());
    QVERIFY(b.id() > a.id());
}

void TstJobTracker::cancel()
{
    JobTracker t;
    const auto a = t.begin();
    t.cancel();
    QVERIFY(a.stale());
    QVERIFY(JobTracker::Ticket().stale());
}

void TstJobTracker::outlivesTracker()
{
    JobTracker::Ticket ticket;
    {
        JobTracker t;
        ticket = t.begin();
        QVERIFY(ticket.current());
    }
    QVERIFY(ticket.stale());
}

void TstJobTracker::workerSeesCancellation()
{
    JobTracker t;
    const auto ticket = t.begin();
    std::atomic<int> loops { 0 };
    std::thread worker([&] {
        while (ticket.current())
            loops.fetch_add(1);
    });
    QTRY_VERIFY(loops.load() > 0);
    t.begin(); // the user asked for something newer
    worker.join();
    QVERIFY(ticket.stale());
}

QTEST_APPLESS_MAIN(TstJobTracker)
#include "tst_jobtracker.moc"
