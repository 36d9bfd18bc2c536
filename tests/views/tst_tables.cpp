// SPDX-License-Identifier: MIT
// The statistics tables as shown (StatsPanel with real widgets, offscreen): kernel names in their
// short form with the full name on hover and in the CSV, and a filter that matches either form.
#include "model/kernelname.h"
#include "views/eventcolors.h"
#include "views/kerneltablemodel.h"
#include "views/membertablemodel.h"
#include "views/statspanel.h"
#include "views/statstable.h"

#include "testtrace.h"

#include <QLineEdit>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTest>

using namespace gapscope::model;

class TstTables : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void kernelNamesShort();
    void filterMatchesShortAndFull_data();
    void filterMatchesShortAndFull();
    void memberNamesShort();

private:
    QStringList shownNames() const;
    std::shared_ptr<const Trace> m_trace;
    std::unique_ptr<StatsPanel> m_panel;
};

void TstTables::initTestCase()
{
    m_trace = std::make_shared<const Trace>(testtrace::make());
    auto colors = std::make_shared<EventColors>();
    colors->build(*m_trace, [](std::string_view) { return std::string(); });
    m_panel = std::make_unique<StatsPanel>();
    m_panel->resize(1200, 400);
    m_panel->show();
    QSignalSpy ready(m_panel.get(), &StatsPanel::statsReady);
    m_panel->setDocument(m_trace, colors);
    QTRY_VERIFY_WITH_TIMEOUT(!ready.isEmpty(), 10000);
    QCOMPARE(m_panel->kernelModel()->rowCount(), 4);
}

QStringList TstTables::shownNames() const
{
    const QAbstractItemModel* m = m_panel->kernelTable()->view()->model();
    QStringList out;
    for (int r = 0; r < m->rowCount(); ++r)
        out << m->index(r, KernelTableModel::Name).data().toString();
    out.sort();
    return out;
}

void TstTables::kernelNamesShort()
{
    QCOMPARE(shownNames(),
        QStringList({ QStringLiteral("cutlass_moe_fp4_grouped_gemm_kernel"),
            QStringLiteral("flash::flash_fwd_splitkv_kernel<…>(…)"),
            QStringLiteral("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(…)"),
            QStringLiteral("rmsnorm_kernel<float>(…)") }));
    QTableView* view = m_panel->kernelTable()->view();
    QVERIFY(view->isColumnHidden(KernelTableModel::FullName));
    QVERIFY(!view->isColumnHidden(KernelTableModel::Name));
    const QString full = QString::fromStdString(testtrace::kernelNames()[0]);
    for (int r = 0; r < view->model()->rowCount(); ++r) {
        const QModelIndex idx = view->model()->index(r, KernelTableModel::Name);
        if (idx.data().toString().startsWith(QLatin1String("flash::"))) {
            QCOMPARE(idx.data(Qt::ToolTipRole).toString(), full);
            QCOMPARE(view->model()->index(r, KernelTableModel::FullName).data().toString(), full);
        }
    }
    // The CSV has both forms: the name column short, the last column full.
    const QString csv = m_panel->kernelTable()->csv(false);
    QVERIFY2(csv.contains(QStringLiteral("flash::flash_fwd_splitkv_kernel<…>(…)")), qPrintable(csv));
    QVERIFY(csv.contains(QStringLiteral("\"void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, "
                                        "4>, true>(Flash_fwd_params)\"")));
    QVERIFY(csv.section(QLatin1Char('\n'), 0, 0).endsWith(QLatin1String("full name")));
}

void TstTables::filterMatchesShortAndFull_data()
{
    QTest::addColumn<QString>("filter");
    QTest::addColumn<int>("rows");
    QTest::newRow("short form") << QStringLiteral("splitkv_kernel<…>") << 1;
    QTest::newRow("template argument of the full name") << QStringLiteral("Flash_fwd_kernel_traits") << 1;
    QTest::newRow("parameter of the full name") << QStringLiteral("float const\\*") << 1;
    QTest::newRow("return type") << QStringLiteral("void ") << 2;
    QTest::newRow("both") << QStringLiteral("kernel") << 4;
    QTest::newRow("none") << QStringLiteral("no such kernel") << 0;
}

void TstTables::filterMatchesShortAndFull()
{
    QFETCH(QString, filter);
    QFETCH(int, rows);
    QLineEdit* box = m_panel->kernelTable()->filter();
    box->clear();
    box->setText(filter); // keyClicks cannot type "…"
    QCOMPARE(m_panel->kernelTable()->view()->model()->rowCount(), rows);
    box->clear();
    QCOMPARE(m_panel->kernelTable()->view()->model()->rowCount(), 4);
}

void TstTables::memberNamesShort()
{
    const LaneEvents& ev = m_trace->lane(0).events;
    std::vector<BarMember> members;
    members.push_back({ 0, EventRef { 0, 0 }, ev.start(0), ev.end(0) });
    members.push_back({ 1, EventRef {}, testtrace::kT0 + 96'000, testtrace::kT0 + 120'000 });
    m_panel->setMembers(QStringLiteral("step gaps"), members);
    QTableView* view = m_panel->memberTable()->view();
    QVERIFY(view->isColumnHidden(MemberTableModel::FullName));
    const QString full = QString::fromStdString(std::string(m_trace->str(ev.name(0))));
    const QModelIndex kernel = m_panel->memberModel()->index(0, MemberTableModel::What);
    QCOMPARE(kernel.data().toString(), QString::fromStdString(shortKernelName(full.toStdString())));
    QVERIFY(kernel.data().toString() != full);
    QCOMPARE(kernel.data(Qt::ToolTipRole).toString(), full);
    QCOMPARE(m_panel->memberModel()->index(1, MemberTableModel::What).data().toString(), QStringLiteral("step gap"));
    QTest::keyClicks(m_panel->memberTable()->filter(), QStringLiteral("Flash_fwd_params"));
    QCOMPARE(view->model()->rowCount(), 1);
    m_panel->memberTable()->filter()->clear();
}

QTEST_MAIN(TstTables)
#include "tst_tables.moc"
