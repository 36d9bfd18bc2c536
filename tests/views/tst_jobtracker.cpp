// SPDX-License-Identifier: MIT
// JobTracker: a newer job makes older tickets stale, also across threads and after destruction.
#include "views/common/jobtracker.h"

#include <QTest>

#include <atomic>
#include <chrono>
#include <thread>

class TstJobTracker : public QObject {
    Q_OBJECT
private slots:
    void newerJobMakesOlderStale();
    void cancel();
    void outlivesTracker();
    void workerSeesCancellation();
    void ticketCancelsItsToken();
    void supersededPoolWorkStops();
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

void TstJobTracker::ticketCancelsItsToken()
{
    JobTracker t;
    const auto a = t.begin();
    QVERIFY(!a.cancelToken().cancelled());
    const auto b = t.begin();
    QVERIFY(a.cancelToken().cancelled());
    QVERIFY(!b.cancelToken().cancelled());
    t.cancel();
    QVERIFY(b.cancelToken().cancelled());
}

void TstJobTracker::supersededPoolWorkStops()
{
    // A job on the viewer's pool runs a parallel loop with its ticket's token; asking for something
    // newer stops it within one item per thread.
    JobTracker t;
    const auto ticket = t.begin();
    constexpr size_t kItems = 1'000'000;
    std::atomic<size_t> done { 0 };
    std::atomic<bool> finished { false };
    jobPool()->submit([&] {
        jobPool()->parallelFor(
            kItems,
            [&](size_t) {
                done.fetch_add(1);
                std::this_thread::sleep_for(std::chrono::microseconds(50));
            },
            0, ticket.cancelToken());
        finished = true;
    });
    QTRY_VERIFY(done.load() > 20);
    t.begin();
    const size_t atCancel = done.load();
    QTRY_VERIFY_WITH_TIMEOUT(finished.load(), 10'000);
    QVERIFY2(done.load() <= atCancel + jobPool()->size(), qPrintable(QString::number(done.load() - atCancel)));
    QVERIFY(done.load() < kItems);
}

QTEST_APPLESS_MAIN(TstJobTracker)
#include "tst_jobtracker.moc"
