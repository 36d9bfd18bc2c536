// SPDX-License-Identifier: MIT
// Interaction with QTest mouse/key events: wheel zoom around the cursor, W/S/A/D, drag to pan,
// shift-drag to select, click and double-click an event, Ctrl+F search, and a click on a waterfall
// bar lighting up its kernels on the timeline; the capture's own cost shown under the waterfall.
#include "model/io/tracefile.h"
#include "views/analysis/budgetpanel.h"
#include "views/analysis/budgetprompt.h"
#include "views/analysis/budgetstore.h"
#include "views/analysis/findingspanel.h"
#include "views/analysis/waterfallchart.h"
#include "views/analysis/waterfallpanel.h"
#include "views/common/eventcolors.h"
#include "views/document/tracedocument.h"
#include "views/document/workspace.h"
#include "views/tables/membertablemodel.h"
#include "views/tables/statspanel.h"
#include "views/timeline/searchbar.h"
#include "views/timeline/timelinewidget.h"

#include "testtrace.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>

using namespace gapscope::model;

Q_DECLARE_METATYPE(gapscope::model::EventRef)

class TstInteraction : public QObject {
    Q_OBJECT
private slots:
    void init();
    void cleanup();
    void laneLabelColumnResizes();
    void wheelZoomsAroundCursor();
    void keysZoomAndPan();
    void dragPans();
    void shiftDragSelects();
    void clickSelectsDoubleClickZooms();
    void searchFindsNext();
    void clickingABarHighlightsItsKernels();
    void editingTheBudgetRecomputesTheWaterfall();
    void captureOverheadIsShownUnderTheWaterfall();
    void emptyBarsHideAndShow();
    void noBudgetShowsTheMeasuredBreakdown();
    void choosingABudgetStoresIt();
    void findingsAreTheCliFindingsAndJump();

private:
    QPoint pointOf(uint32_t step, uint32_t k, LaneId lane = 0) const;
    // Writes the test trace to a .gapscope file in a temporary folder and shows it from there (so a
    // stored budget goes into that file, never next to the tests).
    QString showFromFile();
    QTemporaryDir m_tmp;
    std::shared_ptr<TraceDocument> m_doc;
    std::unique_ptr<Workspace> m_ws;
    TimelineWidget* m_tl = nullptr;
};

void TstInteraction::init()
{
    qRegisterMetaType<EventRef>();
    m_doc = TraceDocument::fromTrace(testtrace::make(), QStringLiteral("test.gapscope"));
    m_ws = std::make_unique<Workspace>();
    m_ws->resize(1500, 900);
    m_ws->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_ws.get()));
    m_ws->setDocument(m_doc);
    m_tl = m_ws->timeline();
    m_tl->zoomToAll();
    QVERIFY(m_tl->view().mapping.width > 300);
}

QString TstInteraction::showFromFile()
{
    const QString path = m_tmp.filePath(QStringLiteral("decode.gapscope"));
    QFile::remove(path);
    QFile::remove(path + QStringLiteral(".budget"));
    const gapscope::Status s = writeTraceFile(testtrace::make(), path.toStdString());
    if (!s)
        return QString::fromStdString(s.message());
    auto trace = readTraceFile(path.toStdString());
    if (!trace)
        return QString::fromStdString(trace.error());
    m_ws->setDocument(TraceDocument::fromTrace(std::move(*trace), path));
    return {};
}

void TstInteraction::cleanup()
{
    m_ws.reset();
}

QPoint TstInteraction::pointOf(uint32_t step, uint32_t k, LaneId lane) const
{
    const TimeNs t = testtrace::kernelStart({}, step, k) + 5'000;
    const LaneRow& row = m_tl->laneLayout().rows()[size_t(m_tl->laneLayout().rowOfLane(lane))];
    return QPoint(int(m_tl->headerWidth() + m_tl->view().mapping.toX(t)),
        TimelineRenderer::widgetY(row.y + row.height / 2, m_tl->view()));
}

static void wheel(QWidget* w, QPoint pos, int delta, Qt::KeyboardModifiers mods = {})
{
    QWheelEvent e(pos, w->mapToGlobal(pos), QPoint(), QPoint(0, delta), Qt::NoButton, mods, Qt::NoScrollPhase, false);
    QApplication::sendEvent(w, &e);
}

void TstInteraction::laneLabelColumnResizes()
{
    QCOMPARE(m_tl->headerWidth(), TimelineRenderer::kHeaderWidth);
    const TimeNs first = m_tl->view().mapping.firstVisible();
    const TimeNs last = m_tl->view().mapping.lastVisible();
    const int y = TimelineRenderer::kRulerHeight + 30;
    QVERIFY(m_tl->onHeaderEdge(QPoint(TimelineRenderer::kHeaderWidth, y)));
    // Drag the column's edge to 360 px: wider labels, the same time window in a narrower plot.
    QTest::mousePress(m_tl, Qt::LeftButton, {}, QPoint(TimelineRenderer::kHeaderWidth + 1, y));
    QMouseEvent move(QEvent::MouseMove, QPointF(360, y), m_tl->mapToGlobal(QPointF(360, y)), Qt::NoButton,
        Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(m_tl, &move);
    QTest::mouseRelease(m_tl, Qt::LeftButton, {}, QPoint(360, y));
    QCOMPARE(m_tl->headerWidth(), 360);
    QCOMPARE(m_tl->view().mapping.width, m_tl->canvasSize().width() - 360);
    const double npp = m_tl->view().mapping.nsPerPixel;
    QVERIFY(std::llabs(m_tl->view().mapping.firstVisible() - first) <= TimeNs(npp) + 1);
    QVERIFY(std::llabs(m_tl->view().mapping.lastVisible() - last) <= 2 * TimeNs(npp) + 2);
    // Events are hit where they are drawn.
    QTest::mouseClick(m_tl, Qt::LeftButton, {}, pointOf(0, 2));
    QCOMPARE(m_tl->view().selected.index, 2u);
    // Narrow: a long label elides in the middle (its start and its end stay), and shows whole on hover.
    m_tl->setHeaderWidth(10);
    QCOMPARE(m_tl->headerWidth(), TimelineRenderer::kMinHeaderWidth);
    m_tl->grab();
    const auto& rows = m_tl->laneLayout().rows();
    int elided = 0;
    for (int r = 0; r < int(rows.size()); ++r) {
        const QString painted = m_tl->renderer().paintedHeaderLabel(r);
        if (rows[size_t(r)].type != LaneRow::Type::Lane || !painted.contains(QChar(0x2026)))
            continue;
        ++elided;
        const QString whole = rows[size_t(r)].label;
        QVERIFY2(whole.startsWith(painted.left(2)) && whole.endsWith(painted.right(2)), qPrintable(painted));
        const QPoint at(20, TimelineRenderer::widgetY(rows[size_t(r)].y + rows[size_t(r)].height / 2, m_tl->view()));
        QCOMPARE(m_tl->renderer().headerLabelAt(at, m_tl->view()), whole);
    }
    QVERIFY(elided > 0);
    m_tl->setHeaderWidth(TimelineRenderer::kHeaderWidth);
}

void TstInteraction::wheelZoomsAroundCursor()
{
    const QPoint at = pointOf(1, 3);
    const TimeNs before = m_tl->view().mapping.toTime(at.x() - TimelineRenderer::kHeaderWidth);
    const double npp = m_tl->view().mapping.nsPerPixel;
    wheel(m_tl, at, 240);
    QVERIFY(m_tl->view().mapping.nsPerPixel < npp);
    const TimeNs after = m_tl->view().mapping.toTime(at.x() - TimelineRenderer::kHeaderWidth);
    QVERIFY2(std::llabs(after - before) <= TimeNs(m_tl->view().mapping.nsPerPixel) + 1,
        qPrintable(QStringLiteral("%1 vs %2").arg(after).arg(before)));
    wheel(m_tl, at, -240);
    QVERIFY(std::abs(m_tl->view().mapping.nsPerPixel - npp) / npp < 1e-6);
}

void TstInteraction::keysZoomAndPan()
{
    m_tl->setFocus();
    QCursor::setPos(m_tl->mapToGlobal(QPoint(-50, -50))); // keys zoom around the centre
    const double npp = m_tl->view().mapping.nsPerPixel;
    QTest::keyClick(m_tl, Qt::Key_W);
    QVERIFY(std::abs(m_tl->view().mapping.nsPerPixel - npp / 1.25) < 1e-6 * npp);
    QTest::keyClick(m_tl, Qt::Key_W);
    const TimeNs first = m_tl->view().mapping.firstVisible();
    QTest::keyClick(m_tl, Qt::Key_D);
    QVERIFY(m_tl->view().mapping.firstVisible() > first);
    QTest::keyClick(m_tl, Qt::Key_A);
    QVERIFY(std::llabs(m_tl->view().mapping.firstVisible() - first) <= 2);
    QTest::keyClick(m_tl, Qt::Key_S);
    QTest::keyClick(m_tl, Qt::Key_S);
    QVERIFY(std::abs(m_tl->view().mapping.nsPerPixel - npp) < 1e-6 * npp);
}

void TstInteraction::dragPans()
{
    m_tl->zoomToRange(testtrace::kT0 + 100'000, testtrace::kT0 + 200'000);
    const TimeNs first = m_tl->view().mapping.firstVisible();
    const double npp = m_tl->view().mapping.nsPerPixel;
    const QPoint a = pointOf(1, 2);
    QTest::mousePress(m_tl, Qt::LeftButton, {}, a);
    QTest::mouseMove(m_tl, a + QPoint(-50, 0));
    QTest::mouseMove(m_tl, a + QPoint(-100, 0));
    QTest::mouseRelease(m_tl, Qt::LeftButton, {}, a + QPoint(-100, 0));
    QVERIFY(std::llabs(m_tl->view().mapping.firstVisible() - (first + TimeNs(100 * npp))) <= 2);
    QVERIFY(!m_tl->view().hasSelection);
}

void TstInteraction::shiftDragSelects()
{
    QSignalSpy spy(m_tl, &TimelineWidget::rangeSelected);
    const QPoint a = pointOf(1, 0), b = pointOf(2, 0);
    QTest::mousePress(m_tl, Qt::LeftButton, Qt::ShiftModifier, a);
    QTest::mouseMove(m_tl, (a + b) / 2);
    QTest::mouseMove(m_tl, b);
    QTest::mouseRelease(m_tl, Qt::LeftButton, Qt::ShiftModifier, b);
    QCOMPARE(spy.count(), 1);
    const TimeNs t0 = spy.at(0).at(0).value<TimeNs>(), t1 = spy.at(0).at(1).value<TimeNs>();
    const double npp = m_tl->view().mapping.nsPerPixel;
    QVERIFY(std::llabs(t0 - (testtrace::kernelStart({}, 1, 0) + 5'000)) <= npp + 1);
    QVERIFY(std::llabs(t1 - (testtrace::kernelStart({}, 2, 0) + 5'000)) <= npp + 1);
    QVERIFY(m_tl->view().hasSelection);
    // The statistics follow the selected range (computed in the background).
    QTRY_VERIFY_WITH_TIMEOUT(!m_ws->statsPanel()->computing(), 10'000);
    QTest::keyClick(m_tl, Qt::Key_Escape);
    QVERIFY(!m_tl->view().hasSelection);
}

void TstInteraction::clickSelectsDoubleClickZooms()
{
    m_tl->zoomToRange(testtrace::kT0, testtrace::kT0 + 240'000);
    QSignalSpy spy(m_tl, &TimelineWidget::eventSelected);
    const QPoint p = pointOf(1, 3);
    QTest::mouseClick(m_tl, Qt::LeftButton, {}, p);
    QCOMPARE(spy.count(), 1);
    const EventRef ev = spy.at(0).at(0).value<EventRef>();
    QCOMPARE(ev.lane, LaneId(0));
    QCOMPARE(ev.index, 8u + 3u);
    QTest::mouseDClick(m_tl, Qt::LeftButton, {}, p);
    const TimeNs s = testtrace::kernelStart({}, 1, 3);
    // Zoomed so that the 10 us kernel fills the view with 10% margins on each side.
    QVERIFY(std::abs(m_tl->view().mapping.nsPerPixel - 10'000.0 / (0.8 * m_tl->view().mapping.width)) < 1e-3);
    QVERIFY(std::llabs(m_tl->view().mapping.toTime(0.1 * m_tl->view().mapping.width) - s) <= 2);
}

void TstInteraction::searchFindsNext()
{
    QTest::keyClick(m_ws->timeline(), Qt::Key_F, Qt::ControlModifier); // no main window here: use the bar directly
    m_ws->searchBar()->activate();
    m_ws->searchBar()->field()->setText(QStringLiteral("moe_fp4"));
    QTest::keyClick(m_ws->searchBar()->field(), Qt::Key_Return);
    const EventRef first = m_tl->currentMatch();
    QVERIFY(first.valid());
    QVERIFY(m_doc->trace->str(m_doc->trace->lane(first.lane).events.name(first.index)).find("moe_fp4")
        != std::string_view::npos);
    QTest::keyClick(m_ws->searchBar()->field(), Qt::Key_Return);
    const EventRef second = m_tl->currentMatch();
    QVERIFY(second.valid());
    QVERIFY(m_doc->trace->lane(second.lane).events.start(second.index)
        >= m_doc->trace->lane(first.lane).events.start(first.index));
    QVERIFY(second.lane != first.lane || second.index != first.index);
    QTest::keyClick(m_ws->searchBar()->field(), Qt::Key_Return, Qt::ShiftModifier);
    QCOMPARE(m_tl->currentMatch().index, first.index);
    QCOMPARE(m_tl->currentMatch().lane, first.lane);
}

void TstInteraction::clickingABarHighlightsItsKernels()
{
    WaterfallChart* chart = m_ws->waterfallPanel()->chart();
    QTRY_VERIFY_WITH_TIMEOUT(!chart->columns().empty(), 20'000);
    // Find the column of the "attention_core" class (flash kernels) (budget bar, or measured bar without a budget).
    int column = -1;
    for (int i = 0; i < int(chart->columns().size()); ++i) {
        if (chart->columns()[size_t(i)].label == QLatin1String("attention_core"))
            column = i;
    }
    QVERIFY2(column >= 0, "no attention_core bar");
    const QPoint at = chart->columnCenter(column).toPoint();
    QTest::mouseClick(chart->viewport(), Qt::LeftButton, {}, at);
    QTRY_VERIFY_WITH_TIMEOUT(!m_tl->highlight().empty(), 20'000);
    // The median step of the critical rank: its two flash kernels, on that rank's stream.
    const TimelineHighlight& h = m_tl->highlight();
    QCOMPARE(h.label, QStringLiteral("attention_core"));
    QCOMPARE(h.eventCount(), size_t(2));
    for (LaneId lane = 0; lane < h.events.size(); ++lane) {
        for (uint32_t i : h.events[lane])
            QVERIFY(m_doc->trace->str(m_doc->trace->lane(lane).events.name(i)).find("flash") != std::string_view::npos);
    }
    QCOMPARE(m_ws->statsPanel()->memberModel()->rowCount(), 2);
    QTest::keyClick(m_tl, Qt::Key_Escape);
    QVERIFY(m_tl->highlight().empty());
}

void TstInteraction::editingTheBudgetRecomputesTheWaterfall()
{
    WaterfallChart* chart = m_ws->waterfallPanel()->chart();
    QCOMPARE(showFromFile(), QString());
    m_ws->chooseBudget(QStringLiteral("glm-5"), QStringLiteral("h200-sxm"));
    BudgetPanel* panel = m_ws->budgetPanel();
    QVERIFY(panel->budget());
    QTRY_VERIFY_WITH_TIMEOUT(chart->data().budgetMs() > 0, 20'000);
    const double before = chart->data().budgetMs();
    // Type a 16x longer context, as a user would: more KV cache to read per step.
    auto* context = panel->findChild<QSpinBox*>(QStringLiteral("context"));
    QVERIFY(context);
    const int longer = std::max(1024, context->value()) * 16;
    context->setFocus();
    context->selectAll();
    QTest::keyClicks(context, QString::number(longer));
    QTRY_COMPARE_WITH_TIMEOUT(panel->inputs().context, uint64_t(longer), 10'000);
    QTRY_VERIFY_WITH_TIMEOUT(chart->data().budgetMs() > before, 20'000);
    const auto& b = *panel->budget();
    const double expected = m_ws->waterfallPanel()->achievable() ? b.achievableMs : b.idealMs;
    QVERIFY2(std::abs(chart->data().budgetMs() - expected) < 1e-6 * expected,
        qPrintable(QStringLiteral("%1 vs %2").arg(chart->data().budgetMs()).arg(expected)));
}

void TstInteraction::emptyBarsHideAndShow()
{
    WaterfallChart* chart = m_ws->waterfallPanel()->chart();
    QTRY_VERIFY_WITH_TIMEOUT(!chart->columns().empty(), 20'000);
    QCheckBox* hide = m_ws->waterfallPanel()->hideEmptyBox();
    QVERIFY(hide->isChecked());
    int empty = 0;
    for (const WaterfallBar& b : chart->data().bars)
        empty += b.zeroInEveryStep && b.ms == 0;
    QVERIFY(empty > 0); // the test trace has no memory operations and no sync calls
    const size_t shown = chart->columns().size();
    for (const WaterfallColumn& c : chart->columns())
        QVERIFY2(c.bar < 0 || !chart->data().bars[size_t(c.bar)].zeroInEveryStep, qPrintable(c.label));
    const double measured = chart->columns().back().value;
    QTest::mouseClick(hide, Qt::LeftButton);
    QVERIFY(!hide->isChecked());
    QCOMPARE(chart->columns().size(), shown + size_t(empty));
    QCOMPARE(WaterfallChart::labelItems(chart->chart()).size(), shown + size_t(empty));
    QCOMPARE(chart->columns().back().value, measured);
    QTest::mouseClick(hide, Qt::LeftButton);
    QCOMPARE(chart->columns().size(), shown);
}

void TstInteraction::noBudgetShowsTheMeasuredBreakdown()
{
    // The test trace stores no budget: no model is assumed, the bars are what was measured.
    WaterfallChart* chart = m_ws->waterfallPanel()->chart();
    QTRY_VERIFY_WITH_TIMEOUT(!chart->columns().empty(), 20'000);
    QVERIFY(!m_ws->budgetPanel()->budget());
    QVERIFY(m_ws->budgetPanel()->error().isEmpty());
    QStringList names;
    for (const WaterfallBar& b : chart->data().bars) {
        QVERIFY2(b.kind != WaterfallBar::Kind::Budget, qPrintable(b.name));
        names << b.name;
    }
    for (const char* gap : { "collective wait", "launch/host gaps", "sync stalls", "step gap" })
        QVERIFY2(names.contains(QLatin1String(gap)), gap);
    QVERIFY(std::any_of(chart->data().bars.begin(), chart->data().bars.end(),
        [](const WaterfallBar& b) { return b.kind == WaterfallBar::Kind::Measured && b.ms > 0; }));
    for (const WaterfallColumn& c : chart->columns())
        QVERIFY2(c.label != QLatin1String("budget"), "no budget column");
    const QString caption = m_ws->caption().text();
    QVERIFY2(!caption.contains(QLatin1String("glm"), Qt::CaseInsensitive), qPrintable(caption));
    QVERIFY2(!caption.contains(QLatin1String("RTX"), Qt::CaseInsensitive), qPrintable(caption));
    QVERIFY2(caption.contains(QLatin1String("no budget")), qPrintable(caption));
    // The prompt: presets and "Open config.json…" for the model, TP from the two ranks, nothing chosen.
    BudgetPrompt* prompt = m_ws->waterfallPanel()->budgetPrompt();
    QVERIFY(prompt->isVisible());
    QVERIFY(prompt->modelBox()->findText(QStringLiteral("glm-5")) > 0);
    QVERIFY(prompt->modelBox()->findText(QStringLiteral("Open config.json…")) > 0);
    QVERIFY(prompt->hardwareBox()->findText(QStringLiteral("h200-sxm")) > 0);
    QVERIFY(prompt->findChild<QLabel*>() != nullptr);
    bool tp = false;
    for (QLabel* l : prompt->findChildren<QLabel*>())
        tp = tp || l->text().startsWith(QLatin1String("TP 2"));
    QVERIFY(tp);
    QVERIFY(prompt->model().isEmpty());
    QVERIFY(!prompt->compareButton()->isEnabled());
}

void TstInteraction::choosingABudgetStoresIt()
{
    QCOMPARE(showFromFile(), QString());
    const QString path = m_tmp.filePath(QStringLiteral("decode.gapscope"));
    BudgetPrompt* prompt = m_ws->waterfallPanel()->budgetPrompt();
    QTRY_VERIFY(prompt->isVisible());
    // A GPU the presets know is offered first, marked as the trace's.
    prompt->setTrace(QStringLiteral("NVIDIA H200"), m_ws->budgetPanel()->hardwareFor(QStringLiteral("NVIDIA H200")), 2);
    QCOMPARE(prompt->hardware(), QStringLiteral("h200-sxm"));
    QVERIFY(prompt->hardwareBox()->currentText().contains(QLatin1String("this trace's GPU: NVIDIA H200")));
    prompt->modelBox()->setCurrentIndex(prompt->modelBox()->findText(QStringLiteral("glm-5")));
    QVERIFY(prompt->compareButton()->isEnabled());
    QTest::mouseClick(prompt->compareButton(), Qt::LeftButton);
    QVERIFY(m_ws->budgetPanel()->budget());
    QCOMPARE(m_ws->budgetPanel()->inputs().tp, 2u);
    WaterfallChart* chart = m_ws->waterfallPanel()->chart();
    QTRY_VERIFY_WITH_TIMEOUT(chart->data().budgetMs() > 0, 20'000);
    QVERIFY(!prompt->isVisible());
    // Stored in the trace file's budget section (no sidecar), and used when the file is opened again.
    QVERIFY(!QFile::exists(path + QStringLiteral(".budget")));
    auto again = readTraceFile(path.toStdString());
    QVERIFY(again);
    QVERIFY(again->budgetSettings());
    QCOMPARE(again->budgetSettings()->model, std::string("glm-5"));
    QCOMPARE(again->budgetSettings()->hardware, std::string("h200-sxm"));
    QCOMPARE(again->budgetSettings()->tp, 2u);
    Workspace other;
    other.setDocument(TraceDocument::fromTrace(std::move(*again), path));
    QVERIFY(other.budgetPanel()->budget());
    QTRY_VERIFY_WITH_TIMEOUT(other.waterfallPanel()->chart()->data().budgetMs() > 0, 20'000);
    // An imported trace cannot hold it: it goes beside the file, and wins when opened again.
    const QString json = m_tmp.filePath(QStringLiteral("rank0.json"));
    m_ws->setDocument(TraceDocument::fromTrace(testtrace::make(), json));
    QTRY_VERIFY(prompt->isVisible());
    m_ws->chooseBudget(QStringLiteral("qwen3-30b-a3b"), QStringLiteral("h100-sxm"));
    QString error;
    const auto sidecar = budgetstore::loadSidecar(json, &error);
    QVERIFY2(sidecar, qPrintable(error));
    QCOMPARE(sidecar->model, std::string("qwen3-30b-a3b"));
    m_ws->setDocument(TraceDocument::fromTrace(testtrace::make(), json));
    QVERIFY(m_ws->budgetPanel()->budget());
    QCOMPARE(m_ws->budgetPanel()->inputs().modelSource, std::string("qwen3-30b-a3b"));
}

void TstInteraction::findingsAreTheCliFindingsAndJump()
{
    QCOMPARE(showFromFile(), QString());
    FindingsPanel* panel = m_ws->findingsPanel();
    QTRY_VERIFY_WITH_TIMEOUT(!panel->findings().empty(), 20'000);
    QCOMPARE(m_ws->statsPanel()->tabs()->currentWidget(), panel); // shown first
    // The same sentences as gapscope-cli analyze on the same file (no budget on either side).
    QProcess cli;
    cli.start(QStringLiteral(GAPSCOPE_CLI_BIN),
        { QStringLiteral("analyze"), QStringLiteral("--json"), m_tmp.filePath(QStringLiteral("decode.gapscope")) });
    QVERIFY(cli.waitForFinished(60'000));
    const QJsonDocument doc = QJsonDocument::fromJson(cli.readAllStandardOutput());
    QVERIFY(doc.isObject());
    QStringList expected;
    for (const auto& v : doc.object().value(QStringLiteral("findings")).toArray())
        expected << v.toString();
    QVERIFY(!expected.isEmpty());
    QStringList shown;
    for (const Finding& f : panel->findings())
        if (f.kind != "note")
            shown << QString::fromStdString(f.text);
    QCOMPARE(shown, expected);
    QCOMPARE(panel->list()->count(), int(panel->findings().size()));
    // A largest gap: clicking it shows its time range on its rank.
    int gap = -1;
    for (size_t i = 0; i < panel->findings().size(); ++i)
        if (panel->findings()[i].kind == "largest_gap" && gap < 0)
            gap = int(i);
    QVERIFY(gap >= 0);
    const Finding f = panel->findings()[size_t(gap)];
    QVERIFY(f.t1 > f.t0 && f.rank >= 0 && f.step >= 0);
    QVERIFY(panel->list()->item(gap)->text().contains(QStringLiteral("rank %1 · step %2").arg(f.rank).arg(f.step)));
    QListWidgetItem* item = panel->list()->item(gap);
    panel->list()->scrollToItem(item);
    QTest::mouseClick(panel->list()->viewport(), Qt::LeftButton, {}, panel->list()->visualItemRect(item).center());
    QVERIFY(m_tl->view().hasSelection);
    QCOMPARE(m_tl->view().selStart, f.t0);
    QCOMPARE(m_tl->view().selEnd, f.t1);
    QVERIFY(m_tl->view().mapping.firstVisible() <= f.t0 && m_tl->view().mapping.lastVisible() >= f.t1);
    QVERIFY(m_tl->view().mapping.lastVisible() - m_tl->view().mapping.firstVisible() < 20 * (f.t1 - f.t0));
    // A bar's finding lights the bar up (once the waterfall, computed after the findings, is there).
    QTRY_VERIFY_WITH_TIMEOUT(!m_ws->analysis()->waterfall().bars.empty(), 20'000);
    QTRY_VERIFY_WITH_TIMEOUT(!m_ws->waterfallPanel()->chart()->columns().empty(), 20'000);
    for (size_t i = 0; i < panel->findings().size(); ++i) {
        if (panel->findings()[i].bar == gapscope::model::BarId::None)
            continue;
        panel->list()->scrollToItem(panel->list()->item(int(i)));
        QTest::mouseClick(panel->list()->viewport(), Qt::LeftButton, {},
            panel->list()->visualItemRect(panel->list()->item(int(i))).center());
        const int bar = m_ws->waterfallPanel()->chart()->selectedBar();
        QVERIFY(bar >= 0);
        const WaterfallBar& selected = m_ws->analysis()->waterfall().bars[size_t(bar)];
        QCOMPARE(selected.id, panel->findings()[i].bar);
        QCOMPARE(selected.slot, panel->findings()[i].barSlot);
        QCOMPARE(selected.name.toStdString(), panel->findings()[i].barName);
        break;
    }
}

void TstInteraction::captureOverheadIsShownUnderTheWaterfall()
{
    QVERIFY(!m_ws->waterfallPanel()->status().contains(QStringLiteral("Capture overhead"))); // none recorded
    testtrace::Options o;
    o.overheadBeforeMs = 6.5;
    o.overheadDuringMs = 7.475;
    m_ws->setDocument(TraceDocument::fromTrace(testtrace::make(o), QStringLiteral("captured.gapscope")));
    QTRY_VERIFY_WITH_TIMEOUT(m_ws->waterfallPanel()->status().contains(QStringLiteral("Capture overhead")), 20'000);
    const QString status = m_ws->waterfallPanel()->status();
    QVERIFY2(status.contains(QStringLiteral("rank 0: step 6.500 ms before arming (8 steps, fewer than 50); 7.475 ms "
                                            "while capturing (+15.0 %, 4 steps, fewer than 50)")),
        qPrintable(status));
    QVERIFY(!status.contains(QStringLiteral("rank 1:")));
}

QTEST_MAIN(TstInteraction)
#include "tst_interaction.moc"
