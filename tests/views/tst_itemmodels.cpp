// SPDX-License-Identifier: MIT
// Item models under QAbstractItemModelTester, with their values checked on a known trace.
#include "views/annotations/annotationmodel.h"
#include "views/common/csvexport.h"
#include "views/common/eventcolors.h"
#include "views/tables/kerneltablemodel.h"
#include "views/tables/membertablemodel.h"
#include "views/tables/steptablemodel.h"

#include "testtrace.h"

#include <QAbstractItemModelTester>
#include <QSortFilterProxyModel>
#include <QTest>

using namespace gapscope::model;

class TstItemModels : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void kernelTable();
    void kernelTableSortsNumerically();
    void kernelTableOwnTime();
    void componentTable();
    void statsOfARange();
    void stepTable();
    void stepTableCsv();
    void annotationModel();
    void memberTable();

private:
    Trace m_trace;
    EventColors m_colors;
};

static std::string classify(std::string_view name)
{
    if (name.find("flash") != std::string_view::npos)
        return "attention";
    if (name.find("moe") != std::string_view::npos)
        return "routed_experts";
    if (name.find("AllReduce") != std::string_view::npos)
        return "collectives";
    return {};
}

void TstItemModels::initTestCase()
{
    m_trace = testtrace::make();
    m_colors.build(m_trace, classify);
}

void TstItemModels::kernelTable()
{
    KernelTableModel model(KernelTableModel::Mode::Names);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setStats(computeKernelStats(m_trace, {}, &m_colors));
    // 4 distinct kernel names.
    QCOMPARE(model.rowCount(), 4);
    const QString flash = QString::fromStdString(testtrace::kernelNames()[0]);
    int row = -1;
    for (int r = 0; r < model.rowCount(); ++r) {
        if (model.row(r)->name == flash)
            row = r;
    }
    QVERIFY(row >= 0);
    const NameStats& s = *model.row(row);
    // 2 ranks x 4 steps x 2 per step (8 kernels cycle through 4 names).
    QCOMPARE(s.count, uint64_t(16));
    QCOMPARE(s.totalNs, 160'000.0);
    QCOMPARE(s.meanNs, 10'000.0);
    QCOMPARE(s.p50Ns, 10'000.0);
    QCOMPARE(s.p99Ns, 10'000.0);
    QCOMPARE(s.component, QStringLiteral("attention"));
    // % of step: 160 us of 2 ranks x 4 steps x 120 us.
    QVERIFY(qAbs(s.percentOfStep - 100.0 * 160.0 / 960.0) < 1e-9);
    QCOMPARE(model.data(model.index(row, KernelTableModel::Count)).toString(), QStringLiteral("16"));
    QCOMPARE(model.data(model.index(row, KernelTableModel::Mean)).toString(), QStringLiteral("10.0 us"));
    QCOMPARE(model.data(model.index(row, KernelTableModel::Total), Qt::UserRole).toDouble(), 160'000.0);
    QCOMPARE(model.data(model.index(row, KernelTableModel::PercentOfStep)).toString(), QStringLiteral("16.67%"));
}

void TstItemModels::kernelTableSortsNumerically()
{
    KernelTableModel model(KernelTableModel::Mode::Names);
    KernelStatsResult r;
    for (double total : { 9'000.0, 100'000.0, 20'000.0 }) {
        NameStats s;
        s.name = QString::number(total);
        s.totalNs = total;
        r.names.push_back(s);
    }
    model.setStats(r);
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setSortRole(Qt::UserRole);
    QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    proxy.sort(KernelTableModel::Total, Qt::DescendingOrder);
    // As text "9.00 us" > "100 us" > "20.0 us"; as numbers 100 us first.
    QCOMPARE(proxy.data(proxy.index(0, KernelTableModel::Name)).toString(), QStringLiteral("100000"));
    QCOMPARE(proxy.data(proxy.index(2, KernelTableModel::Name)).toString(), QStringLiteral("9000"));
}

void TstItemModels::kernelTableOwnTime()
{
    // One stream: a [0, 10 us), b [8 us, 20 us) launched early (PDL, waits 2 us), a [20 us, 25 us).
    TraceBuilder b;
    const LaneId l = b.lane({ LaneKind::GpuStream, 0, "h", 0, 7, "", 0 });
    b.addKernel(l, 0, 10'000, b.intern("a"), 0, {});
    b.addKernel(l, 8'000, 12'000, b.intern("b"), 0, {});
    b.addKernel(l, 20'000, 5'000, b.intern("a"), 0, {});
    const Trace t = b.finish();
    KernelTableModel model(KernelTableModel::Mode::Names);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setStats(computeKernelStats(t, {}, nullptr));
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.headerData(KernelTableModel::OwnTotal, Qt::Horizontal).toString(), QStringLiteral("own total"));
    for (int r = 0; r < model.rowCount(); ++r) {
        const bool isB = model.row(r)->name == QStringLiteral("b");
        QCOMPARE(model.row(r)->totalNs, isB ? 12'000.0 : 15'000.0);
        QCOMPARE(
            model.data(model.index(r, KernelTableModel::OwnTotal), Qt::UserRole).toDouble(), isB ? 10'000.0 : 15'000.0);
    }
    // A range from b's start (the first a, still running, is outside it) still counts b from a's end.
    StatsScope scope;
    scope.t0 = 8'000;
    const KernelStatsResult r = computeKernelStats(t, scope, nullptr);
    QCOMPARE(r.names.size(), size_t(2));
    QCOMPARE(r.names[0].name, QStringLiteral("b"));
    QCOMPARE(r.names[0].ownTotalNs, 10'000.0);
    QCOMPARE(r.names[1].ownTotalNs, 5'000.0);
}

void TstItemModels::componentTable()
{
    KernelTableModel model(KernelTableModel::Mode::Components);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setStats(computeKernelStats(m_trace, {}, &m_colors));
    QCOMPARE(model.rowCount(), 4); // attention, routed_experts, collectives, unclassified (rmsnorm)
    QStringList names;
    for (int r = 0; r < model.rowCount(); ++r) {
        names << model.row(r)->name;
        QCOMPARE(model.row(r)->count, uint64_t(16));
    }
    names.sort();
    QCOMPARE(names.join(QLatin1Char(',')), QStringLiteral("attention,collectives,routed_experts,unclassified kernels"));
    QCOMPARE(model.headerData(0, Qt::Horizontal).toString(), QStringLiteral("component"));
}

void TstItemModels::statsOfARange()
{
    // Rank 1, step 2 only.
    StatsScope scope;
    scope.rank = 1;
    scope.t0 = testtrace::kT0 + 2 * 120'000;
    scope.t1 = scope.t0 + 120'000;
    const KernelStatsResult r = computeKernelStats(m_trace, scope, &m_colors);
    QCOMPARE(r.ranks, 1u);
    QCOMPARE(r.steps, 1u);
    QCOMPARE(r.stepTimeNs, 120'000.0);
    uint64_t count = 0;
    for (const auto& n : r.names)
        count += n.count;
    QCOMPARE(count, uint64_t(8));
}

void TstItemModels::stepTable()
{
    StepTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setTrace(&m_trace);
    QCOMPARE(model.rowCount(), 4);
    QCOMPARE(model.columnCount(), 2 + 4);
    QCOMPARE(model.headerData(1, Qt::Horizontal).toString(), QStringLiteral("rank 0 (ms)"));
    QCOMPARE(model.data(model.index(2, 0)).toString(), QStringLiteral("2"));
    QCOMPARE(model.data(model.index(2, 1)).toString(), QStringLiteral("0.120"));
    QCOMPARE(model.data(model.index(2, 2), Qt::UserRole).toDouble(), 0.12);
    QCOMPARE(model.slowestMs(1), 0.12);
    QCOMPARE(model.data(model.index(0, 4), Qt::UserRole).toDouble(), 0.0); // spread
    QCOMPARE(model.window(1).first, testtrace::kT0 + 120'000);
    QCOMPARE(model.rowOfStep(3), 3);
    QCOMPARE(model.rowOfStep(9), -1);
    model.setTrace(nullptr);
    QCOMPARE(model.rowCount(), 0);
}

void TstItemModels::stepTableCsv()
{
    testtrace::Options o;
    o.steps = 2;
    const Trace t = testtrace::make(o);
    StepTableModel model;
    model.setTrace(&t);
    QCOMPARE(csvexport::toCsv(model),
        QStringLiteral("step,rank 0 (ms),rank 1 (ms),slowest (ms),spread (ms),vs median\n"
                       "0,0.12,0.12,0.12,0,0\n"
                       "1,0.12,0.12,0.12,0,0\n"));
    QCOMPARE(csvexport::quote(QStringLiteral("a,\"b\"")), QStringLiteral("\"a,\"\"b\"\"\""));
}

void TstItemModels::annotationModel()
{
    AnnotationModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setAnnotations({}, testtrace::kT0);
    gapscope::model::Annotation a;
    a.startNs = testtrace::kT0 + 1'500;
    a.endNs = testtrace::kT0 + 4'000;
    a.laneKey = "r0/gpu/d0/7";
    a.text = "slow launch";
    QCOMPARE(model.add(a), 0);
    gapscope::model::Annotation p;
    p.startNs = testtrace::kT0 + 10'000;
    p.endNs = testtrace::kT0 + 10'000;
    p.text = "point";
    QCOMPARE(model.add(p), 1);
    QVERIFY(model.isModified());
    QCOMPARE(model.at(0).id, uint64_t(1));
    QCOMPARE(model.at(1).id, uint64_t(2));
    QCOMPARE(model.data(model.index(0, AnnotationModel::Start)).toString(), QStringLiteral("+1.50000 us"));
    QCOMPARE(model.data(model.index(0, AnnotationModel::Length)).toString(), QStringLiteral("2.50 us"));
    QCOMPARE(model.data(model.index(1, AnnotationModel::Length)).toString(), QStringLiteral("point"));
    QCOMPARE(model.data(model.index(1, AnnotationModel::Lane)).toString(), QStringLiteral("all lanes"));
    QVERIFY(model.setData(model.index(0, AnnotationModel::Text), QStringLiteral("edited")));
    QCOMPARE(model.at(0).text, std::string("edited"));
    QVERIFY(!model.setData(model.index(0, AnnotationModel::Start), QStringLiteral("x")));
    model.move(0, 500);
    QCOMPARE(model.at(0).startNs, testtrace::kT0 + 2'000);
    QCOMPARE(model.at(0).endNs, testtrace::kT0 + 4'500);
    model.remove(0);
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.rowOfId(2), 0);
    QCOMPARE(model.rowOfId(1), -1);
}

void TstItemModels::memberTable()
{
    MemberTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    std::vector<BarMember> members;
    members.push_back({ 0, EventRef { 0, 1 }, m_trace.lane(0).events.start(1), m_trace.lane(0).events.end(1), {}, {} });
    members.push_back({ 1, EventRef {}, testtrace::kT0 + 96'000, testtrace::kT0 + 120'000, {}, {} });
    model.setMembers(&m_trace, members, QStringLiteral("step gap"));
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.data(model.index(1, MemberTableModel::What)).toString(), QStringLiteral("step gap"));
    QCOMPARE(model.data(model.index(1, MemberTableModel::Duration)).toString(), QStringLiteral("24.0 us"));
    QCOMPARE(model.data(model.index(0, MemberTableModel::Duration), Qt::UserRole).toLongLong(), 10'000);
    QVERIFY(!model.data(model.index(0, MemberTableModel::What)).toString().isEmpty());
}

QTEST_MAIN(TstItemModels)
#include "tst_itemmodels.moc"
