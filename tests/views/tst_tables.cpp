// SPDX-License-Identifier: MIT
// The statistics tables as shown (StatsPanel with real widgets, offscreen): kernel names in their
// short form with the full name on hover and in the CSV, a filter that matches either form, columns
// sized to their content with the name column widest, and CSV from every table (the live panel's
// agents too).
#include "model/trace/kernelname.h"
#include "views/common/csvexport.h"
#include "views/common/eventcolors.h"
#include "views/tables/kerneltablemodel.h"
#ifdef GAPSCOPE_HAVE_LIVE
#include "views/live/livepanel.h"
#endif
#include "model/open/traceopen.h"
#include "views/common/statstable.h"
#include "views/tables/membertablemodel.h"
#include "views/tables/rangetablemodel.h"
#include "views/tables/statspanel.h"
#include "views/timeline/detailspane.h"

#include "testtrace.h"

#include <QDir>
#include <QFile>
#include <QHeaderView>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTableWidget>
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
    void columnsFitContent();
    void memberColumnsFitContent();
    void everyTableHasCsv();
    void rangesOfARealGraphCapture();

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
    members.push_back({ 0, EventRef { 0, 0 }, ev.start(0), ev.end(0), {}, {} });
    members.push_back({ 1, EventRef {}, testtrace::kT0 + 96'000, testtrace::kT0 + 120'000, {}, {} });
    m_panel->setMembers(QStringLiteral("step gaps"), QStringLiteral("step gap"), members);
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

// Every visible column at least as wide as its content; the name column the widest, its names whole.
static void checkFit(StatsTable* table, int nameColumn)
{
    QTableView* view = table->view();
    const QAbstractItemView* items = view; // sizeHintForColumn is public there
    table->fitColumns();
    const QFontMetrics fm(view->font());
    const int name = view->columnWidth(nameColumn);
    for (int c = 0; c < view->model()->columnCount(); ++c) {
        if (view->isColumnHidden(c))
            continue;
        const QString header = view->model()->headerData(c, Qt::Horizontal).toString();
        QVERIFY2(view->columnWidth(c) >= items->sizeHintForColumn(c), qPrintable(header));
        if (c != nameColumn)
            QVERIFY2(name > view->columnWidth(c), qPrintable(header));
    }
    for (int r = 0; r < view->model()->rowCount(); ++r) {
        const QString text = view->model()->index(r, nameColumn).data().toString();
        QVERIFY2(fm.horizontalAdvance(text) < name, qPrintable(text));
    }
    // The columns fill the table (no stretched last column taking the room from the name).
    int total = 0;
    for (int c = 0; c < view->model()->columnCount(); ++c)
        total += view->isColumnHidden(c) ? 0 : view->columnWidth(c);
    QVERIFY(total >= view->viewport()->width() - 1);
}

void TstTables::columnsFitContent()
{
    m_panel->tabs()->setCurrentIndex(0);
    checkFit(m_panel->kernelTable(), KernelTableModel::Name);
    // Narrower than the content: the numbers keep their width, the name still the widest.
    m_panel->resize(700, 400);
    QTRY_VERIFY(m_panel->kernelTable()->view()->viewport()->width() < 700);
    m_panel->kernelTable()->fitColumns();
    QTableView* view = m_panel->kernelTable()->view();
    for (int c = KernelTableModel::Count; c < KernelTableModel::FullName; ++c)
        QVERIFY(view->columnWidth(KernelTableModel::Name) > view->columnWidth(c));
    m_panel->resize(1200, 400);
}

void TstTables::memberColumnsFitContent()
{
    const LaneEvents& ev = m_trace->lane(0).events;
    std::vector<BarMember> members;
    for (uint32_t i = 0; i < 8; ++i)
        members.push_back({ 0, EventRef { 0, i }, ev.start(i), ev.end(i), {}, {} });
    m_panel->setMembers(QStringLiteral("attention"), QString(), members);
    QTRY_VERIFY(m_panel->memberTable()->isVisible());
    checkFit(m_panel->memberTable(), MemberTableModel::What);
    QVERIFY(m_panel->memberTable()->view()->columnWidth(MemberTableModel::What) > 400);
}

void TstTables::everyTableHasCsv()
{
#ifdef GAPSCOPE_HAVE_LIVE
    // The live panel's agent table (a QTableWidget) has the same CSV actions as the statistics.
    LivePanel live;
    QTableWidget* agents = live.agentTable();
    agents->setRowCount(2);
    agents->setItem(0, 0, new QTableWidgetItem(QStringLiteral("127.0.0.1:7433")));
    agents->setItem(0, 1, new QTableWidgetItem(QStringLiteral("node0")));
    agents->setItem(1, 0, new QTableWidgetItem(QStringLiteral("10.0.0.2:7433")));
    agents->setItem(1, 1, new QTableWidgetItem(QStringLiteral("node1, rack 2")));
    QCOMPARE(agents->contextMenuPolicy(), Qt::CustomContextMenu);
    bool copy = false;
    for (QAction* a : agents->actions())
        copy = copy || a->shortcut() == QKeySequence(QKeySequence::Copy);
    QVERIFY(copy);
    const QString csv = csvexport::viewCsv(*agents, false);
    QCOMPARE(csv.section(QLatin1Char('\n'), 0, 0), QStringLiteral("Agent,Host,Clock offset,State,Agent file"));
    QCOMPARE(csv.section(QLatin1Char('\n'), 2, 2), QStringLiteral("10.0.0.2:7433,\"node1, rack 2\",,,"));
    agents->selectRow(0);
    QCOMPARE(csvexport::viewCsv(*agents, true).count(QLatin1Char('\n')), 2);
#endif
    // And a CSV file written from a table reads back the same.
    const QString path = QDir::temp().filePath(QStringLiteral("gapscope_tst_tables.csv"));
    QString error;
    QVERIFY(csvexport::saveCsv(path, m_panel->kernelTable()->csv(false), &error));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(QString::fromUtf8(f.readAll()), m_panel->kernelTable()->csv(false));
    f.remove();
    QVERIFY(!csvexport::saveCsv(QStringLiteral("/nonexistent-dir/x.csv"), QStringLiteral("a\n"), &error));
    QVERIFY(!error.isEmpty());
}

// The Ranges tab and the details pane on a real CUDA-graph capture (tests/analysis/fixtures/graphnodes: a
// Llama-shaped step captured as a graph under NVTX ranges per layer and sub-block, replayed): every replayed
// kernel's row is where its node was built, 6 MLP kernels per step in each layer, and a replayed kernel's
// details say "captured in".
void TstTables::rangesOfARealGraphCapture()
{
    auto opened = gapscope::model::openTrace(
        { GAPSCOPE_SOURCE_DIR "/tests/analysis/fixtures/graphnodes/graph_ranges.gapscope" });
    QVERIFY2(bool(opened), opened ? "" : opened.error().c_str());
    auto trace = std::make_shared<const Trace>(std::move(opened).value());
    auto colors = std::make_shared<EventColors>();
    colors->build(*trace, [](std::string_view) { return std::string(); });
    StatsPanel panel;
    QSignalSpy ranges(&panel, &StatsPanel::rangesReady);
    panel.setDocument(trace, colors);
    QTRY_VERIFY_WITH_TIMEOUT(!ranges.isEmpty(), 20000);
    const RangeTableModel* m = panel.rangeModel();
    int mlp = -1;
    for (int r = 0; r < m->rowCount(); ++r)
        if (m->index(r, RangeTableModel::Range).data().toString() == QStringLiteral("decode > layer 3 > mlp"))
            mlp = r;
    QVERIFY(mlp >= 0);
    QCOMPARE(m->index(mlp, RangeTableModel::Source).data().toString(), QStringLiteral("capture"));
    QCOMPARE(m->index(mlp, RangeTableModel::PerStep).data(Qt::UserRole).toDouble(), 6.0);
    QCOMPARE(panel.tabs()->tabText(panel.tabs()->indexOf(panel.rangeTable())),
        QStringLiteral("Ranges (%1)").arg(m->rowCount()));
    DetailsPane pane;
    pane.setTrace(trace.get(), colors.get());
    for (const Lane& l : trace->lanes()) {
        if (l.info.kind != LaneKind::GpuStream)
            continue;
        for (size_t i = 0; i < l.events.size(); ++i) {
            const KernelConfig* c
                = trace->kindOf(l.id, i) == EventKind::Kernel ? trace->kernelConfig(l.id, i) : nullptr;
            if (!c || !c->graphNodeId)
                continue;
            const QString html = pane.eventHtml(EventRef { l.id, uint32_t(i) });
            QVERIFY2(html.contains(QStringLiteral("captured in")) && html.contains(QStringLiteral("decode")),
                qPrintable(html));
            return;
        }
    }
    QFAIL("no graph kernel in the capture");
}

QTEST_MAIN(TstTables)
#include "tst_tables.moc"
