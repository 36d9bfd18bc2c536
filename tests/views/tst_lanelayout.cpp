// SPDX-License-Identifier: MIT
// LaneLayout: grouping host > rank > stream, options, row lookup.
#include "views/timeline/lanelayout.h"

#include "testtrace.h"

#include "model/analysis/kernelranges.h"

#include <QTest>

using namespace gapscope::model;

class TstLaneLayout : public QObject {
    Q_OBJECT
private slots:
    void groupingAndOrder_data();
    void groupingAndOrder();
    void rowLookup();
    void collapsedRank();
    void cpuThreadGroup_data();
    void cpuThreadGroup();
    void fromTrace();
    void replayRangesUnderTheirStream_data();
    void replayRangesUnderTheirStream();
};

static LaneEntry entry(LaneKind kind, uint32_t rank, const char* host, uint64_t stream, uint32_t depth = 0)
{
    LaneEntry e;
    e.info.kind = kind;
    e.info.rank = rank;
    e.info.host = host;
    e.info.device = rank;
    e.info.stream = stream;
    e.levels = depth;
    return e;
}

// Lanes given out of order: the layout sorts them by host, rank, kind, stream.
static std::vector<LaneEntry> lanes()
{
    return { entry(LaneKind::Nvtx, 1, "b", 11, 3), entry(LaneKind::GpuStream, 1, "b", 9),
        entry(LaneKind::GpuStream, 0, "a", 7), entry(LaneKind::CpuApi, 0, "a", 10),
        entry(LaneKind::GpuStream, 0, "a", 3), entry(LaneKind::Collective, 0, "a", 0) };
}

void TstLaneLayout::groupingAndOrder_data()
{
    QTest::addColumn<bool>("cpuApi");
    QTest::addColumn<bool>("nvtx");
    QTest::addColumn<QString>("order"); // H host, R rank header, lane ids
    QTest::newRow("default") << false << true << "H R 4 2 5 H R 1 0";
    QTest::newRow("with CPU API") << true << true << "H R 4 2 5 3 H R 1 0";
    QTest::newRow("no NVTX") << false << false << "H R 4 2 5 H R 1";
}

void TstLaneLayout::groupingAndOrder()
{
    QFETCH(bool, cpuApi);
    QFETCH(bool, nvtx);
    QFETCH(QString, order);
    LaneLayoutOptions o;
    o.showCpuApi = cpuApi;
    o.showNvtx = nvtx;
    LaneLayout l;
    l.build(lanes(), {}, o);
    QStringList got;
    int y = 0;
    for (const LaneRow& r : l.rows()) {
        QCOMPARE(r.y, y);
        y += r.height;
        got << (r.type == LaneRow::Type::HostHeader   ? QStringLiteral("H")
                : r.type == LaneRow::Type::RankHeader ? QStringLiteral("R")
                                                      : QString::number(r.lane));
    }
    QCOMPARE(got.join(QLatin1Char(' ')), order);
    QCOMPARE(l.totalHeight(), y);
}

void TstLaneLayout::rowLookup()
{
    LaneLayoutOptions o;
    LaneLayout l;
    l.build(lanes(), {}, o);
    // NVTX lane 0 has depth 3: three levels.
    const int nvtxRow = l.rowOfLane(0);
    QVERIFY(nvtxRow >= 0);
    QCOMPARE(l.rows()[size_t(nvtxRow)].levels, 3);
    QCOMPARE(l.rows()[size_t(nvtxRow)].height, 3 * o.nvtxRowHeight);
    for (int i = 0; i < int(l.rows().size()); ++i) {
        const LaneRow& r = l.rows()[size_t(i)];
        QCOMPARE(l.rowAt(r.y), i);
        QCOMPARE(l.rowAt(r.y + r.height - 1), i);
        if (r.type == LaneRow::Type::Lane)
            QCOMPARE(l.rowOfLane(r.lane), i);
    }
    QCOMPARE(l.rowAt(-1), -1);
    QCOMPARE(l.rowAt(l.totalHeight()), -1);
    QCOMPARE(l.rowOfLane(3), -1); // CPU API hidden by default
    const auto [first, last] = l.rowsIn(o.hostHeaderHeight, o.hostHeaderHeight + 1);
    QCOMPARE(first, 1);
    QCOMPARE(last, 2);
}

void TstLaneLayout::collapsedRank()
{
    LaneLayoutOptions o;
    o.collapsedRanks.insert(0);
    LaneLayout l;
    l.build(lanes(), {}, o);
    QCOMPARE(l.rowOfLane(4), -1);
    QCOMPARE(l.rowOfLane(2), -1);
    QVERIFY(l.rowOfRank(0) >= 0);
    QVERIFY(l.rowOfLane(1) >= 0);
}

void TstLaneLayout::cpuThreadGroup_data()
{
    // Rank 0 has CPU thread lanes 6 (thread 10, 3 levels) and 7 (thread 12, 20 levels): a "CPU threads"
    // group (C) after its NVTX row, holding each thread's flame then its CUDA API row, whatever showCpuApi says.
    QTest::addColumn<bool>("open");
    QTest::addColumn<bool>("cpuApi");
    QTest::addColumn<QString>("order");
    QTest::newRow("closed") << false << false << "H R 4 2 5 C H R 1 0";
    QTest::newRow("closed, CPU API on") << false << true << "H R 4 2 5 C H R 1 0";
    QTest::newRow("open") << true << false << "H R 4 2 5 C 6 3 7 H R 1 0";
}

void TstLaneLayout::cpuThreadGroup()
{
    QFETCH(bool, open);
    QFETCH(bool, cpuApi);
    QFETCH(QString, order);
    std::vector<LaneEntry> all = lanes();
    all.push_back(entry(LaneKind::CpuThread, 0, "a", 10, 3));
    all.push_back(entry(LaneKind::CpuThread, 0, "a", 12, 20));
    LaneLayoutOptions o;
    o.showCpuApi = cpuApi;
    if (open)
        o.openCpuRanks.insert(0);
    LaneLayout l;
    l.build(all, {}, o);
    QStringList got;
    for (const LaneRow& r : l.rows())
        got << (r.type == LaneRow::Type::HostHeader   ? QStringLiteral("H")
                : r.type == LaneRow::Type::RankHeader ? QStringLiteral("R")
                : r.type == LaneRow::Type::CpuHeader  ? QStringLiteral("C")
                                                      : QString::number(r.lane));
    QCOMPARE(got.join(QLatin1Char(' ')), order);
    const int group = l.rowOfCpuGroup(0);
    QVERIFY(group >= 0);
    QCOMPARE(l.rows()[size_t(group)].label, QStringLiteral("CPU threads (2)"));
    QCOMPARE(l.rowOfCpuGroup(1), -1);
    if (open) {
        const LaneRow& three = l.rows()[size_t(l.rowOfLane(6))];
        QCOMPARE(three.levels, 3);
        QCOMPARE(three.height, 3 * o.nvtxRowHeight);
        QCOMPARE(l.rows()[size_t(l.rowOfLane(7))].levels, o.maxHostDepth); // capped
        QCOMPARE(l.rows()[size_t(l.rowOfLane(3))].height, o.rowHeight);
    }
}

void TstLaneLayout::fromTrace()
{
    const Trace trace = testtrace::make();
    LaneLayoutOptions o;
    o.showCpuApi = true;
    LaneLayout l;
    l.build(trace, o);
    // 1 host header + per rank: header, GPU stream, collectives, NVTX, CPU API.
    QCOMPARE(int(l.rows().size()), 1 + 2 * 5);
    QCOMPARE(l.rows()[1].label, QStringLiteral("rank 0 · GPU 0"));
    QCOMPARE(l.rows()[2].kind, LaneKind::GpuStream);
    QCOMPARE(l.rows()[2].label, QStringLiteral("stream 7"));
    QCOMPARE(l.rows()[4].kind, LaneKind::Nvtx);
    QCOMPARE(l.rows()[4].levels, 1);
}

void TstLaneLayout::replayRangesUnderTheirStream_data()
{
    QTest::addColumn<bool>("ranges");
    QTest::addColumn<bool>("nvtx");
    QTest::addColumn<QString>("order");
    QTest::newRow("default") << true << true << "H R 1 4 0 3 2";
    QTest::newRow("ranges off") << false << true << "H R 1 0 2";
    QTest::newRow("NVTX off") << true << false << "H R 1 4 0 3";
}

// A stream's replay-range lane (kernelranges.h) comes right after that stream, before the next one, and
// has its own switch (the NVTX lanes' does not hide it).
void TstLaneLayout::replayRangesUnderTheirStream()
{
    QFETCH(bool, ranges);
    QFETCH(bool, nvtx);
    QFETCH(QString, order);
    const uint64_t bits = kGpuAnnotationStreamBit | kReplayRangeStreamBit;
    std::vector<LaneEntry> in { entry(LaneKind::GpuStream, 0, "a", 7), entry(LaneKind::GpuStream, 0, "a", 3),
        entry(LaneKind::Nvtx, 0, "a", 11, 2), entry(LaneKind::Nvtx, 0, "a", 7 | bits, 3),
        entry(LaneKind::Nvtx, 0, "a", 3 | bits, 3) };
    in[3].info.name = "stream 7 by range";
    LaneLayoutOptions o;
    o.showReplayRanges = ranges;
    o.showNvtx = nvtx;
    LaneLayout l;
    l.build(in, {}, o);
    QStringList got;
    for (const LaneRow& r : l.rows())
        got << (r.type == LaneRow::Type::HostHeader   ? QStringLiteral("H")
                : r.type == LaneRow::Type::RankHeader ? QStringLiteral("R")
                                                      : QString::number(r.lane));
    QCOMPARE(got.join(QLatin1Char(' ')), order);
    if (ranges) {
        const LaneRow& row = l.rows()[size_t(l.rowOfLane(3))];
        QCOMPARE(row.label, QStringLiteral("stream 7 by range"));
        QCOMPARE(row.levels, 3);
    }
}

QTEST_APPLESS_MAIN(TstLaneLayout)
#include "tst_lanelayout.moc"
