// SPDX-License-Identifier: MIT
// Record conversion from hand-built CUPTI records, for every layout the converter knows.
#include "capture/inject/activityconverter.h"

#include <cupti_activity.h>
#include <cupti_activity_deprecated.h>

#include <QtTest>
#include <cstring>

using namespace gapscope::capture::inject;

namespace {

const char* kKernelName = "_Z6gemv_kILi128EEvPKfPf";

template <typename K> K makeKernel(CUpti_ActivityKind kind)
{
    K k;
    std::memset(&k, 0, sizeof(k));
    k.kind = kind;
    k.start = 1700000000123456789ull;
    k.end = k.start + 4321;
    k.deviceId = 1;
    k.contextId = 7;
    k.streamId = 13;
    k.gridX = 132;
    k.gridY = 2;
    k.gridZ = 1;
    k.blockX = 256;
    k.blockY = 1;
    k.blockZ = 1;
    k.registersPerThread = 64;
    k.staticSharedMemory = 1024;
    k.dynamicSharedMemory = 49152;
    k.correlationId = 4242;
    k.name = kKernelName;
    k.graphId = 9;
    k.graphNodeId = 77001;
    return k;
}

template <typename M> M makeMemcpy()
{
    M m;
    std::memset(&m, 0, sizeof(m));
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
    m.bytes = 65536;
    m.start = 1000;
    m.end = 3000;
    m.deviceId = 0;
    m.streamId = 5;
    m.correlationId = 11;
    m.graphId = 0;
    return m;
}

template <typename S> S makeSync()
{
    S s;
    std::memset(&s, 0, sizeof(s));
    s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    s.start = 500;
    s.end = 900;
    s.correlationId = 31;
    s.contextId = 1;
    s.streamId = 7;
    return s;
}

void checkKernel(const GpuRecord& g)
{
    QCOMPARE(int(g.kind), int(GpuRecordKind::Kernel));
    QCOMPARE(g.start, int64_t(1700000000123456789ll));
    QCOMPARE(g.end - g.start, int64_t(4321));
    QCOMPARE(g.device, 1u);
    QCOMPARE(g.context, 7u);
    QCOMPARE(g.stream, 13u);
    QCOMPARE(g.grid[0], 132u);
    QCOMPARE(g.grid[1], 2u);
    QCOMPARE(g.block[0], 256u);
    QCOMPARE(g.registers, 64u);
    QCOMPARE(g.sharedStatic, 1024u);
    QCOMPARE(g.sharedDynamic, 49152u);
    QCOMPARE(g.correlation, 4242u);
    QCOMPARE(g.graphId, uint64_t(9));
    QCOMPARE(g.graphNodeId, uint64_t(77001));
    QCOMPARE(g.name, kKernelName);
}

} // namespace

class TstActivityConverter : public QObject {
    Q_OBJECT
private slots:
    void layoutForVersion_data()
    {
        QTest::addColumn<uint>("version");
        QTest::addColumn<int>("layout");
        QTest::newRow("12.0 (v19)") << 19u << int(CuptiLayout::Cuda118To126);
        QTest::newRow("12.6 (v24)") << 24u << int(CuptiLayout::Cuda118To126);
        QTest::newRow("12.8 (v26)") << 26u << int(CuptiLayout::Cuda128To129);
        QTest::newRow("12.9u1 (v28)") << 28u << int(CuptiLayout::Cuda128To129);
        QTest::newRow("13.0") << 130000u << int(CuptiLayout::Cuda130);
        QTest::newRow("13.0u1") << 130001u << int(CuptiLayout::Cuda130);
        QTest::newRow("13.1 unknown") << 130100u << int(CuptiLayout::Unknown);
        QTest::newRow("11.6 unknown") << 17u << int(CuptiLayout::Unknown);
        QTest::newRow("zero") << 0u << int(CuptiLayout::Unknown);
    }
    void layoutForVersion()
    {
        QFETCH(uint, version);
        QFETCH(int, layout);
        QCOMPARE(int(layoutForCuptiVersion(version)), layout);
    }

    void headersAreWhatTheLayoutsSay()
    {
        // The structs the 13.0 layout reads must be the 13.0 sizes (CAPTURE.md: Kernel10 is 216 bytes).
        QCOMPARE(sizeof(CUpti_ActivityKernel10), size_t(216));
        QVERIFY(sizeof(CUpti_ActivityKernel9) != sizeof(CUpti_ActivityKernel10)
            || offsetof(CUpti_ActivityKernel9, graphId) != offsetof(CUpti_ActivityKernel10, graphId));
    }

    void kernel10()
    {
        auto k = makeKernel<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        GpuRecord g;
        QCOMPARE(
            int(ActivityConverter(CuptiLayout::Cuda130).convert(&k, g)), int(ActivityConverter::Result::Converted));
        checkKernel(g);
    }

    void kernel9_data()
    {
        QTest::addColumn<int>("layout");
        QTest::newRow("11.8-12.6") << int(CuptiLayout::Cuda118To126);
        QTest::newRow("12.8-12.9") << int(CuptiLayout::Cuda128To129);
    }
    void kernel9()
    {
        QFETCH(int, layout);
        auto k = makeKernel<CUpti_ActivityKernel9>(CUPTI_ACTIVITY_KIND_KERNEL);
        GpuRecord g;
        QCOMPARE(int(ActivityConverter(CuptiLayout(layout)).convert(&k, g)), int(ActivityConverter::Result::Converted));
        checkKernel(g);
    }

    void kernelWithoutTimestamps()
    {
        auto k = makeKernel<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        k.start = k.end = 0;
        GpuRecord g;
        QCOMPARE(int(ActivityConverter(CuptiLayout::Cuda130).convert(&k, g)), int(ActivityConverter::Result::NoTiming));
    }

    void unknownLayoutReadsNothing()
    {
        auto k = makeKernel<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        GpuRecord g;
        ActivityConverter c(CuptiLayout::Unknown);
        QVERIFY(!c.usable());
        QCOMPARE(int(c.convert(&k, g)), int(ActivityConverter::Result::Skipped));
    }

    void memcpy_data()
    {
        QTest::addColumn<int>("layout");
        QTest::newRow("Memcpy5 (12.0-12.6)") << int(CuptiLayout::Cuda118To126);
        QTest::newRow("Memcpy6 (12.8)") << int(CuptiLayout::Cuda128To129);
        QTest::newRow("Memcpy6 (13.0)") << int(CuptiLayout::Cuda130);
    }
    void memcpy()
    {
        QFETCH(int, layout);
        GpuRecord g;
        ActivityConverter c { CuptiLayout(layout) };
        if (CuptiLayout(layout) == CuptiLayout::Cuda118To126) {
            auto m = makeMemcpy<CUpti_ActivityMemcpy5>();
            QCOMPARE(int(c.convert(&m, g)), int(ActivityConverter::Result::Converted));
        } else {
            auto m = makeMemcpy<CUpti_ActivityMemcpy6>();
            QCOMPARE(int(c.convert(&m, g)), int(ActivityConverter::Result::Converted));
        }
        QCOMPARE(int(g.kind), int(GpuRecordKind::Memcpy));
        QCOMPARE(int(g.copyKind), 2); // COPY_DTOH
        QCOMPARE(g.flags, 1u);
        QCOMPARE(g.bytes, uint64_t(65536));
        QCOMPARE(g.start, int64_t(1000));
        QCOMPARE(g.end, int64_t(3000));
        QCOMPARE(g.stream, 5u);
        QCOMPARE(g.correlation, 11u);
    }

    void memset()
    {
        CUpti_ActivityMemset4 m;
        std::memset(&m, 0, sizeof(m));
        m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
        m.bytes = 4096;
        m.start = 10;
        m.end = 20;
        m.streamId = 3;
        m.correlationId = 99;
        m.flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
        GpuRecord g;
        QCOMPARE(
            int(ActivityConverter(CuptiLayout::Cuda130).convert(&m, g)), int(ActivityConverter::Result::Converted));
        QCOMPARE(int(g.kind), int(GpuRecordKind::Memset));
        QCOMPARE(g.bytes, uint64_t(4096));
        QCOMPARE(g.flags, 1u);
        QCOMPARE(g.correlation, 99u);
    }

    void api_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("domain");
        QTest::newRow("runtime") << int(CUPTI_ACTIVITY_KIND_RUNTIME) << 0;
        QTest::newRow("driver") << int(CUPTI_ACTIVITY_KIND_DRIVER) << 1;
    }
    void api()
    {
        QFETCH(int, kind);
        QFETCH(int, domain);
        CUpti_ActivityAPI a;
        std::memset(&a, 0, sizeof(a));
        a.kind = CUpti_ActivityKind(kind);
        a.cbid = 311;
        a.start = 100;
        a.end = 150;
        a.processId = 1234;
        a.threadId = 5678;
        a.correlationId = 555;
        GpuRecord g;
        QCOMPARE(
            int(ActivityConverter(CuptiLayout::Cuda130).convert(&a, g)), int(ActivityConverter::Result::Converted));
        QCOMPARE(int(g.kind), int(GpuRecordKind::Api));
        QCOMPARE(int(g.apiDomain), domain);
        QCOMPARE(g.cbid, 311u);
        QCOMPARE(g.stream, 5678u); // thread id
        QCOMPARE(g.pid, 1234u);
        QCOMPARE(g.correlation, 555u);
    }

    void sync_data()
    {
        QTest::addColumn<int>("layout");
        QTest::newRow("Synchronization (12.0-12.6)") << int(CuptiLayout::Cuda118To126);
        QTest::newRow("Synchronization2 (13.0)") << int(CuptiLayout::Cuda130);
    }
    void sync()
    {
        QFETCH(int, layout);
        GpuRecord g;
        ActivityConverter c { CuptiLayout(layout) };
        if (CuptiLayout(layout) == CuptiLayout::Cuda118To126) {
            auto s = makeSync<CUpti_ActivitySynchronization>();
            QCOMPARE(int(c.convert(&s, g)), int(ActivityConverter::Result::Converted));
        } else {
            auto s = makeSync<CUpti_ActivitySynchronization2>();
            QCOMPARE(int(c.convert(&s, g)), int(ActivityConverter::Result::Converted));
        }
        QCOMPARE(int(g.kind), int(GpuRecordKind::Sync));
        QCOMPARE(int(g.syncKind), 3); // SYNC_STREAM
        QCOMPARE(g.start, int64_t(500));
        QCOMPARE(g.stream, 7u);
        QCOMPARE(g.correlation, 31u);
    }

    void otherKindsAreSkipped()
    {
        CUpti_Activity a;
        a.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
        GpuRecord g;
        QCOMPARE(int(ActivityConverter(CuptiLayout::Cuda130).convert(&a, g)), int(ActivityConverter::Result::Skipped));
    }
};

QTEST_APPLESS_MAIN(TstActivityConverter)
#include "tst_activityconverter.moc"
