// SPDX-License-Identifier: MIT
// TimelineRenderer: the folded frame is reused while only overlays change (hover, selection) and
// rebuilt when the view, the size, the trace or the layout changes; decode steps are shaded.
#include "views/timeline/lanelayout.h"
#include "views/timeline/timelinerenderer.h"

#include "testtrace.h"

#include <QImage>
#include <QPainter>
#include <QTest>

using namespace gapscope::model;

class TstTimelineRenderer : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void overlaysReuseTheFrame();
    void viewAndSizeRebuildIt();
    void layoutChangeNeedsSetTraceOrInvalidate();
    void oddStepsAreShaded();

private:
    TimelineView viewAt(double nsPerPixel) const;
    void paint(const TimelineView& v, QSize size = QSize(1000, 400));

    Trace m_trace;
    LaneLayout m_layout;
    TimelineRenderer m_renderer;
    QImage m_image;
};

void TstTimelineRenderer::initTestCase()
{
    m_trace = testtrace::make();
    m_layout.build(m_trace, LaneLayoutOptions {});
    m_renderer.setTrace(&m_trace, &m_layout, nullptr);
}

TimelineView TstTimelineRenderer::viewAt(double nsPerPixel) const
{
    TimelineView v;
    v.mapping.origin = testtrace::kT0;
    v.mapping.nsPerPixel = nsPerPixel;
    v.mapping.width = 1000 - TimelineRenderer::kHeaderWidth;
    return v;
}

void TstTimelineRenderer::paint(const TimelineView& v, QSize size)
{
    m_image = QImage(size, QImage::Format_ARGB32_Premultiplied);
    QPainter p(&m_image);
    m_renderer.paint(p, size, v);
}

void TstTimelineRenderer::overlaysReuseTheFrame()
{
    TimelineView v = viewAt(1000);
    paint(v);
    const size_t rows = m_renderer.frame().rowCount();
    QVERIFY(rows > 0);
    // Collapse rank 0 behind the renderer's back: a reused frame still shows the old rows.
    LaneLayoutOptions collapsed;
    collapsed.collapsedRanks = { 0 };
    m_layout.build(m_trace, collapsed);
    v.hovered = EventRef { 0, 3 };
    v.hasSelection = true;
    v.selStart = testtrace::kT0;
    v.selEnd = testtrace::kT0 + 50'000;
    paint(v);
    QCOMPARE(m_renderer.frame().rowCount(), rows);
    m_renderer.invalidate();
    paint(v);
    QVERIFY(m_renderer.frame().rowCount() < rows);
    m_layout.build(m_trace, LaneLayoutOptions {});
    m_renderer.setTrace(&m_trace, &m_layout, nullptr);
}

void TstTimelineRenderer::viewAndSizeRebuildIt()
{
    TimelineView v = viewAt(1000);
    paint(v);
    QVERIFY(m_renderer.frame().mapping() == v.mapping);
    v.mapping.panPixels(-7);
    paint(v);
    QVERIFY(m_renderer.frame().mapping() == v.mapping);
    // A shorter canvas shows fewer rows; a taller one brings them back.
    const size_t all = m_renderer.frame().rowCount();
    paint(v, QSize(1000, TimelineRenderer::kRulerHeight + 30));
    QVERIFY(m_renderer.frame().rowCount() < all);
    paint(v, QSize(1000, 400));
    QCOMPARE(m_renderer.frame().rowCount(), all);
    // Scrolling down culls rank 0's rows.
    v.scrollY = m_layout.rows()[size_t(m_layout.rowOfRank(1))].y;
    paint(v);
    QCOMPARE(m_renderer.frame().frameRowOf(m_layout.rowOfLane(0)), -1);
}

void TstTimelineRenderer::layoutChangeNeedsSetTraceOrInvalidate()
{
    const TimelineView v = viewAt(1000);
    paint(v);
    const size_t rows = m_renderer.frame().rowCount();
    LaneLayoutOptions noNvtx;
    noNvtx.showNvtx = false;
    m_layout.build(m_trace, noNvtx);
    m_renderer.setTrace(&m_trace, &m_layout, nullptr); // what TimelineWidget does after a layout change
    paint(v);
    QCOMPARE(m_renderer.frame().rowCount(), rows - 2); // one NVTX row per rank fewer
    m_layout.build(m_trace, LaneLayoutOptions {});
    m_renderer.setTrace(&m_trace, &m_layout, nullptr);
}

void TstTimelineRenderer::oddStepsAreShaded()
{
    // 0.5 us/px: step 0 spans x 0..240 of the plot, step 1 x 240..480. Sample the GPU row of rank 0
    // in the 24 us of idle at the end of each step (after the 8 kernels, 96 us in).
    const TimelineView v = viewAt(500);
    paint(v);
    const LaneRow& row = m_layout.rows()[size_t(m_layout.rowOfLane(0))];
    const int y = TimelineRenderer::widgetY(row.y + row.height / 2, v);
    const QRgb even = m_image.pixel(TimelineRenderer::kHeaderWidth + 220, y);
    const QRgb odd = m_image.pixel(TimelineRenderer::kHeaderWidth + 460, y);
    QVERIFY2(qGray(odd) < qGray(even), qPrintable(QStringLiteral("%1 vs %2").arg(qGray(odd)).arg(qGray(even))));
    m_renderer.setShowSteps(false);
    paint(v);
    QCOMPARE(m_image.pixel(TimelineRenderer::kHeaderWidth + 460, y), even);
    m_renderer.setShowSteps(true);
}

QTEST_MAIN(TstTimelineRenderer)
#include "tst_timelinerenderer.moc"
