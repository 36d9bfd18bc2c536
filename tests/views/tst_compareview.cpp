// SPDX-License-Identifier: MIT
// CompareView (File > Compare with…): two synth traces, B with 0.1 ms more host time between steps,
// give the view's bar, kernel and step tables the figures of the comparison (model TraceDiff): the
// step gap bar moves by 0.1 ms and nothing else moves; a kernel renamed by its template arguments
// pairs after normalising, with its counts, totals and medians; traces without steps in common say
// so and still compare kernels; the timeline overlay aligns both steps at their start; the export
// writes the view as PNG and SVG.
#include "model/synth/synth.h"
#include "model/trace/kernelclassifier.h"
#include "model/trace/trace.h"
#include "views/compare/bardiffmodel.h"
#include "views/compare/compareview.h"
#include "views/compare/kerneldiffmodel.h"
#include "views/compare/stepdiffmodel.h"
#include "views/compare/stepoverlay.h"

#include <QAbstractItemModelTester>
#include <QImage>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

using namespace gapscope::model;

namespace {

std::shared_ptr<const TraceDocument> synthDoc(double extraHostGapUs, const QString& name)
{
    SynthOptions o;
    o.ranks = 2;
    o.steps = 6;
    o.kernelsPerStep = 40;
    o.seed = 5;
    o.extraHostGapUs = extraHostGapUs;
    auto t = synthesize(o);
    if (!t)
        qFatal("synth: %s", t.error().c_str());
    return TraceDocument::fromTrace(std::move(t).value(), name);
}

// One rank, one stream; per step three kernels `foo` of `fooNs` each and one `other`, 2 us apart;
// steps `firstStep`, `firstStep + 1`.
std::shared_ptr<const TraceDocument> handDoc(
    const std::string& foo, TimeNs fooNs, const std::string& other, uint32_t firstStep, const QString& name)
{
    TraceBuilder b;
    b.header().source = "test";
    RankInfo& rank = b.header().ranks.emplace_back();
    rank.rank = 0;
    rank.worldSize = 1;
    const LaneId g = b.lane(LaneInfo { LaneKind::GpuStream, 0, "node0", 0, 7, "stream 7", 100 });
    const StringId fooId = b.intern(foo), otherId = b.intern(other);
    const TimeNs t0 = 1'000'000'000;
    for (uint32_t s = 0; s < 2; ++s) {
        const TimeNs start = t0 + TimeNs(s) * 100'000;
        TimeNs t = start;
        for (int k = 0; k < 3; ++k) {
            b.addKernel(g, t, fooNs, fooId, uint32_t(s * 4 + k + 1), KernelConfig {});
            t += fooNs + 2'000;
        }
        b.addKernel(g, t, 5'000, otherId, uint32_t(s * 4 + 4), KernelConfig {});
        Step st;
        st.index = firstStep + s;
        st.start = start;
        st.end = start + 100'000;
        st.source = gapscope::model::StepSource::File;
        b.addStep(0, st);
    }
    return TraceDocument::fromTrace(b.finish(), name);
}

std::shared_ptr<const Comparison> compare(
    std::shared_ptr<const TraceDocument> a, std::shared_ptr<const TraceDocument> b)
{
    return Comparison::make(std::move(a), std::move(b), KernelClassifier::builtinDefault(), StepBudget {});
}

double raw(const QAbstractItemModel* m, int row, int column)
{
    return m->data(m->index(row, column), Qt::UserRole).toDouble();
}

int rowOf(const QAbstractItemModel* m, int column, const QString& text)
{
    for (int r = 0; r < m->rowCount(); ++r)
        if (m->data(m->index(r, column), Qt::UserRole).toString() == text)
            return r;
    return -1;
}

} // namespace

class TestCompareView : public QObject {
    Q_OBJECT
private slots:
    void hostGapLandsInStepGap()
    {
        CompareView view;
        QAbstractItemModelTester t1(view.barModel()), t2(view.kernelModel()), t3(view.stepModel());
        view.setComparison(compare(synthDoc(0, "a"), synthDoc(100, "b")));
        const BarDiffModel* bars = view.barModel();
        QVERIFY(bars->rowCount() > 5);
        QCOMPARE(bars->data(bars->index(0, BarDiffModel::Name)).toString(), QStringLiteral("step gap"));
        QVERIFY(std::fabs(raw(bars, 0, BarDiffModel::Delta) - 0.100) < 1e-6); // the median step: exactly one gap
        double sumA = 0, sumB = 0;
        for (int r = 0; r < bars->rowCount(); ++r) {
            if (r > 0)
                QVERIFY2(std::fabs(raw(bars, r, BarDiffModel::Delta)) < 1e-6, qPrintable(QString::number(r)));
            sumA += raw(bars, r, BarDiffModel::A);
            sumB += raw(bars, r, BarDiffModel::B);
        }
        const auto& w = view.comparison()->diff->median();
        QVERIFY(std::fabs(sumA - w.aMeasuredNs / 1e6) < 1e-9); // the bars add up to the step
        QVERIFY(std::fabs(sumB - w.bMeasuredNs / 1e6) < 1e-9);
        QVERIFY(view.summary().contains(QStringLiteral("steps 0 to 5 (6 in common)")));

        view.showWaterfall(CompareView::Which::Mean); // 5 of the 6 steps have a step after them
        QCOMPARE(bars->data(bars->index(0, BarDiffModel::Name)).toString(), QStringLiteral("step gap"));
        QVERIFY(std::fabs(raw(bars, 0, BarDiffModel::Delta) - 0.100 * 5 / 6) < 1e-6);

        const KernelDiffModel* k = view.kernelModel();
        QCOMPARE(k->rowCount(), 19);
        for (int r = 0; r < k->rowCount(); ++r) {
            QCOMPARE(k->data(k->index(r, KernelDiffModel::Match)).toString(), QStringLiteral("exact"));
            QCOMPARE(raw(k, r, KernelDiffModel::CountA), raw(k, r, KernelDiffModel::CountB));
            QCOMPARE(raw(k, r, KernelDiffModel::DeltaTotal), 0.0);
        }
        const StepDiffModel* s = view.stepModel();
        QCOMPARE(s->rowCount(), 6);
        for (int r = 0; r < 6; ++r) // a step's window runs to the next step's start
            QVERIFY2(std::fabs(raw(s, r, StepDiffModel::Delta) - (r < 5 ? 0.100 : 0.0)) < 1e-6,
                qPrintable(QString::number(raw(s, r, StepDiffModel::Delta))));
    }

    void overlayAlignsStepStarts()
    {
        CompareView view;
        view.resize(1000, 600);
        view.setComparison(compare(synthDoc(0, "a"), synthDoc(100, "b")));
        view.showStep(2, 1);
        QCOMPARE(view.tabs()->currentIndex(), int(CompareView::TimelineTab));
        const StepOverlayData& d = view.overlay()->overlayData();
        QVERIFY(d.valid);
        QCOMPARE(d.step, 2u);
        QCOMPARE(d.rankA, 1u);
        QCOMPARE(d.rankB, 1u);
        QCOMPARE(d.bStepNs - d.aStepNs, TimeNs(100'000)); // the injected host time, at the end of B's step
        QCOMPARE(d.rows.size(), size_t(2)); // one stream each: A over B
        QVERIFY(!d.rows[0].b && d.rows[1].b);
        QCOMPARE(d.rows[0].boxes.size(), d.rows[1].boxes.size());
        for (size_t i = 0; i < d.rows[0].boxes.size(); ++i) { // the same kernels at the same offsets
            QCOMPARE(d.rows[0].boxes[i].t0, d.rows[1].boxes[i].t0);
            QCOMPARE(d.rows[0].boxes[i].name, d.rows[1].boxes[i].name);
        }
        view.overlay()->resize(900, 200);
        QCOMPARE(view.overlay()->boxRect(0, 3).x(), view.overlay()->boxRect(1, 3).x());
        QVERIFY(view.overlay()->boxRect(1, 0).y() > view.overlay()->boxRect(0, 0).y());
    }

    void renamedKernelPairsAfterNormalising()
    {
        CompareView view;
        view.setComparison(compare(handDoc("void foo<int, 4>(int*)", 10'000, "bar_kernel", 0, "a"),
            handDoc("void foo<float, 8>(float*)", 12'000, "baz_kernel", 0, "b")));
        const KernelDiffModel* k = view.kernelModel();
        QCOMPARE(k->rowCount(), 3);
        const int foo = rowOf(k, KernelDiffModel::Match, QStringLiteral("normalised"));
        QVERIFY(foo >= 0);
        QCOMPARE(k->data(k->index(foo, KernelDiffModel::Name)).toString(), QStringLiteral("foo<…>(…)"));
        QCOMPARE(raw(k, foo, KernelDiffModel::CountA), 6.0);
        QCOMPARE(raw(k, foo, KernelDiffModel::CountB), 6.0);
        QCOMPARE(raw(k, foo, KernelDiffModel::TotalA), 60'000.0);
        QCOMPARE(raw(k, foo, KernelDiffModel::TotalB), 72'000.0);
        QCOMPARE(raw(k, foo, KernelDiffModel::DeltaTotal), 12'000.0);
        QCOMPARE(raw(k, foo, KernelDiffModel::MedianA), 10'000.0);
        QCOMPARE(raw(k, foo, KernelDiffModel::MedianB), 12'000.0);
        const QString full = k->data(k->index(foo, KernelDiffModel::FullName)).toString();
        QVERIFY(full.contains(QStringLiteral("A: void foo<int, 4>(int*)")));
        QVERIFY(full.contains(QStringLiteral("B: void foo<float, 8>(float*)")));
        const int bar = rowOf(k, KernelDiffModel::Match, QStringLiteral("vanished"));
        const int baz = rowOf(k, KernelDiffModel::Match, QStringLiteral("new"));
        QVERIFY(bar >= 0 && baz >= 0);
        QCOMPARE(k->data(k->index(bar, KernelDiffModel::Name)).toString(), QStringLiteral("bar_kernel"));
        QCOMPARE(raw(k, bar, KernelDiffModel::CountA), 2.0);
        QCOMPARE(raw(k, bar, KernelDiffModel::CountB), 0.0);
        QVERIFY(std::isnan(raw(k, bar, KernelDiffModel::MedianB)));
        QCOMPARE(k->data(k->index(baz, KernelDiffModel::Name)).toString(), QStringLiteral("baz_kernel"));
        QCOMPARE(raw(k, baz, KernelDiffModel::TotalB), 10'000.0);
        QCOMPARE(view.comparison()->diff->normalisedMatches(), size_t(1));
    }

    void noCommonStepsIsSaid()
    {
        CompareView view;
        view.setComparison(
            compare(handDoc("foo_kernel", 10'000, "x", 0, "a"), handDoc("foo_kernel", 10'000, "x", 5, "b")));
        QVERIFY(view.summary().contains(QStringLiteral("not compared: no steps in common: A has steps 0 to 1, B has "
                                                       "steps 5 to 6")));
        QCOMPARE(view.barModel()->rowCount(), 0);
        QCOMPARE(view.stepModel()->rowCount(), 0);
        QCOMPARE(view.kernelModel()->rowCount(), 2); // still compared
        QVERIFY(!view.overlay()->overlayData().valid);
    }

    void exportWritesTheView()
    {
        QTemporaryDir dir;
        CompareView view;
        view.setComparison(compare(synthDoc(0, "a"), synthDoc(100, "b")));
        const QString png = dir.filePath(QStringLiteral("c.png")), svg = dir.filePath(QStringLiteral("c.svg"));
        QCOMPARE(view.exportImage(png, QSize(900, 600), false), QString());
        QImage img(png);
        QCOMPARE(img.size(), QSize(900, 600));
        int dark = 0; // text and bars, not a blank page
        for (int y = 0; y < img.height(); y += 3)
            for (int x = 0; x < img.width(); x += 3)
                dark += qGray(img.pixel(x, y)) < 128;
        QVERIFY(dark > 100);
        QCOMPARE(view.exportImage(svg, QSize(900, 600), true), QString());
        QVERIFY(QFileInfo(svg).size() > 1000);
        QVERIFY(view.exportImage(png, QSize(10, 10), false).contains(QStringLiteral("outside")));
    }
};

QTEST_MAIN(TestCompareView)
#include "tst_compareview.moc"
