// SPDX-License-Identifier: MIT
// The buffer pool under a flood: bounded memory, refusals counted, every buffer comes back.
#include "capture/inject/bufferpool.h"

#include <QtTest>
#include <atomic>
#include <thread>
#include <vector>

using namespace gapscope::capture::inject;

class TstBufferPool : public QObject {
    Q_OBJECT
private slots:
    void handsOutEachBufferOnce()
    {
        BufferPool pool(1000, 4); // rounded up to 8-byte multiples
        QCOMPARE(pool.bufferBytes(), size_t(1000));
        std::vector<uint8_t*> got;
        for (int i = 0; i < 4; ++i) {
            uint8_t* b = nullptr;
            size_t size = 0;
            QVERIFY(pool.acquire(&b, &size));
            QCOMPARE(size, size_t(1000));
            QCOMPARE(reinterpret_cast<uintptr_t>(b) % 8, uintptr_t(0));
            got.push_back(b);
        }
        std::sort(got.begin(), got.end());
        QVERIFY(std::unique(got.begin(), got.end()) == got.end());
        uint8_t* none = reinterpret_cast<uint8_t*>(1);
        size_t size = 7;
        QVERIFY(!pool.acquire(&none, &size));
        QCOMPARE(none, nullptr);
        QCOMPARE(size, size_t(0));
        QCOMPARE(pool.refused(), uint64_t(1));
        QCOMPARE(pool.inUse(), size_t(4));
    }

    void completedBuffersReachTheWriter()
    {
        BufferPool pool(256, 2);
        uint8_t* b = nullptr;
        size_t size = 0;
        QVERIFY(pool.acquire(&b, &size));
        b[0] = 42;
        pool.complete(b, 100);
        BufferPool::Filled f;
        QVERIFY(pool.takeCompleted(f));
        QCOMPARE(f.data, b);
        QCOMPARE(f.validSize, size_t(100));
        QCOMPARE(f.data[0], uint8_t(42));
        QVERIFY(!pool.takeCompleted(f));
        pool.release(f.data);
        QCOMPARE(pool.inUse(), size_t(0));
    }

    void foreignBuffersAreIgnored()
    {
        BufferPool pool(256, 2);
        uint8_t other[256];
        pool.complete(other, 10);
        uint8_t* b = nullptr;
        size_t size = 0;
        QVERIFY(pool.acquire(&b, &size));
        pool.complete(b + 8, 10); // not the start of a buffer
        QCOMPARE(pool.foreign(), uint64_t(2));
        BufferPool::Filled f;
        QVERIFY(!pool.takeCompleted(f));
    }

    void buffersLeftWithCuptiAreReplaced()
    {
        BufferPool pool(256, 2);
        uint8_t* a = nullptr;
        uint8_t* b = nullptr;
        size_t size = 0;
        QVERIFY(pool.acquire(&a, &size));
        QVERIFY(pool.acquire(&b, &size));
        pool.complete(b, 16); // b came back; a stays with "CUPTI"
        QCOMPARE(pool.abandonInFlight(), size_t(1));
        QCOMPARE(pool.abandoned(), uint64_t(1));
        QCOMPARE(pool.inUse(), size_t(1)); // b is still waiting for the writer
        BufferPool::Filled f;
        QVERIFY(pool.takeCompleted(f));
        QCOMPARE(f.data, b);
        pool.release(f.data);
        QCOMPARE(pool.inUse(), size_t(0));
        // The old block is no longer ours: its late return is ignored, and a fresh block is handed out.
        pool.complete(a, 16);
        QCOMPARE(pool.foreign(), uint64_t(1));
        uint8_t* c = nullptr;
        uint8_t* d = nullptr;
        QVERIFY(pool.acquire(&c, &size));
        QVERIFY(pool.acquire(&d, &size));
        QVERIFY(c != a && d != a);
    }

    void floodIsBoundedAndCounted()
    {
        // Four "CUPTI" threads request and complete as fast as they can while one slow writer
        // drains: memory never grows, and every request is either served or counted as refused.
        BufferPool pool(4096, 8);
        std::atomic<bool> stop { false };
        std::atomic<uint64_t> attempts { 0 }, served { 0 };
        std::vector<std::thread> producers;
        for (int t = 0; t < 4; ++t)
            producers.emplace_back([&] {
                while (!stop.load()) {
                    uint8_t* b = nullptr;
                    size_t size = 0;
                    attempts.fetch_add(1);
                    if (pool.acquire(&b, &size)) {
                        served.fetch_add(1);
                        b[size - 1] = 1;
                        pool.complete(b, size);
                    }
                }
            });
        uint64_t drained = 0;
        size_t maxInUse = 0;
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
        while (std::chrono::steady_clock::now() < until) {
            BufferPool::Filled f;
            while (pool.takeCompleted(f)) {
                ++drained;
                pool.release(f.data);
            }
            maxInUse = std::max(maxInUse, pool.inUse());
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        stop.store(true);
        for (auto& p : producers)
            p.join();
        BufferPool::Filled f;
        while (pool.takeCompleted(f)) {
            ++drained;
            pool.release(f.data);
        }
        QVERIFY(maxInUse <= pool.count());
        QCOMPARE(pool.totalBytes(), size_t(8 * 4096));
        QCOMPARE(served.load() + pool.refused(), attempts.load());
        QCOMPARE(drained, served.load());
        QVERIFY2(pool.refused() > 0, "a flood against 8 buffers must be refused sometimes");
        QCOMPARE(pool.inUse(), size_t(0));
        QCOMPARE(pool.completedBuffers(), served.load());
    }
};

QTEST_APPLESS_MAIN(TstBufferPool)
#include "tst_bufferpool.moc"
