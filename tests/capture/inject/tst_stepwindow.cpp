// SPDX-License-Identifier: MIT
// Step rules on synthetic callback sequences: graph/anchor markers with correlation ids, NVTX
// markers resolved through API records, time windows, missed starts, step spans, evidence, bounds.
#include "capture/inject/stepwindow.h"

#include <QtTest>

using namespace gapscope::capture::inject;

namespace {

constexpr int64_t kT0 = 1700000000000000000ll;
constexpr int64_t kStep = 10000000; // 10 ms

StepMarker marker(int i, uint32_t corr)
{
    StepMarker m;
    m.time = kT0 + i * kStep;
    m.correlation = corr;
    m.source = corr ? MarkerSource::GraphLaunch : MarkerSource::Nvtx;
    return m;
}

GpuRecord kernel(uint32_t corr, int64_t start, int64_t dur = 1000)
{
    GpuRecord r;
    r.kind = GpuRecordKind::Kernel;
    r.correlation = corr;
    r.start = start;
    r.end = start + dur;
    return r;
}

GpuRecord api(uint32_t corr, int64_t start)
{
    GpuRecord r;
    r.kind = GpuRecordKind::Api;
    r.correlation = corr;
    r.start = start;
    r.end = start + 500;
    return r;
}

} // namespace

class TstStepWindow : public QObject {
    Q_OBJECT
private slots:
    void graphRulePlacesByCorrelation()
    {
        StepWindow w;
        for (int i = 0; i < 3; ++i)
            QCOMPARE(w.addMarker(marker(i, 100 * uint32_t(i + 1))), uint64_t(i));
        // Recording switched on before step 2's marker would arrive; window = steps 3..5.
        QVERIFY(w.startSteps(3, 3, 1000, kT0 + 2 * kStep + 1));
        for (int i = 3; i < 7; ++i)
            w.addMarker(marker(i, 100 * uint32_t(i + 1)));
        uint64_t step = 99;
        QCOMPARE(int(w.placeGpu(kernel(399, kT0), &step)), int(StepWindow::Place::Before));
        QCOMPARE(int(w.placeGpu(kernel(400, kT0), &step)), int(StepWindow::Place::Inside));
        QCOMPARE(step, uint64_t(3));
        QCOMPARE(int(w.placeGpu(kernel(555, kT0), &step)), int(StepWindow::Place::Inside));
        QCOMPARE(step, uint64_t(4));
        QCOMPARE(int(w.placeGpu(kernel(699, kT0), &step)), int(StepWindow::Place::Inside));
        QCOMPARE(step, uint64_t(5));
        QCOMPARE(int(w.placeGpu(kernel(700, kT0), &step)), int(StepWindow::Place::After));
        QVERIFY(w.endMarkerSeen());
    }

    void startAlreadyPassedIsMissed()
    {
        StepWindow w;
        for (int i = 0; i < 5; ++i)
            w.addMarker(marker(i, 100 * uint32_t(i + 1)));
        // Step 3 began before recording was on.
        QVERIFY(!w.startSteps(3, 2, 0, kT0 + 3 * kStep + 5));
    }

    void recordsBeforeTheStartMarkerWait()
    {
        StepWindow w;
        w.addMarker(marker(0, 100));
        QVERIFY(w.startSteps(2, 2, 0, kT0 + 1));
        // Step 2 not opened yet: anything now is before it.
        QCOMPARE(int(w.placeGpu(kernel(150, kT0), nullptr)), int(StepWindow::Place::Before));
        QVERIFY(!w.endMarkerSeen());
    }

    void nvtxMarkersResolveThroughApiRecords()
    {
        StepWindow w;
        w.addMarker(marker(0, 0));
        QVERIFY(w.startSteps(1, 2, 0, kT0 + 1));
        w.addMarker(marker(1, 0)); // step 1 at kT0 + 10 ms
        // Without an API record after the marker, a kernel cannot be placed yet.
        QCOMPARE(int(w.placeGpu(kernel(2001, kT0 + kStep + 5000), nullptr)), int(StepWindow::Place::Pending));
        w.noteApi(api(1990, kT0 + kStep - 100)); // before the marker: not it
        w.noteApi(api(2000, kT0 + kStep + 200)); // first call after the marker
        w.noteApi(api(2005, kT0 + kStep + 300));
        uint64_t step = 0;
        QCOMPARE(int(w.placeGpu(kernel(1995, kT0 + kStep), &step)), int(StepWindow::Place::Before));
        QCOMPARE(int(w.placeGpu(kernel(2000, kT0 + kStep + 5000), &step)), int(StepWindow::Place::Inside));
        QCOMPARE(step, uint64_t(1));
        // Above step 1's id while step 1 is the newest marker: step 2's marker may still come.
        QCOMPARE(int(w.placeGpu(kernel(2001, kT0 + kStep + 5000), &step)), int(StepWindow::Place::Pending));
        w.addMarker(marker(2, 0));
        // Step 2's id unknown: a record above step 1's first id might be step 2's.
        QCOMPARE(int(w.placeGpu(kernel(3001, kT0 + 2 * kStep + 5000), &step)), int(StepWindow::Place::Pending));
        w.noteApi(api(3000, kT0 + 2 * kStep + 100));
        QCOMPARE(int(w.placeGpu(kernel(2001, kT0 + kStep + 5000), &step)), int(StepWindow::Place::Inside));
        QCOMPARE(step, uint64_t(1));
        // Step 2 is the window's last: the end marker may still come.
        QCOMPARE(int(w.placeGpu(kernel(3001, kT0 + 2 * kStep + 5000), &step)), int(StepWindow::Place::Pending));
        w.addMarker(marker(3, 0));
        w.noteApi(api(4000, kT0 + 3 * kStep + 100));
        QVERIFY(w.endMarkerSeen());
        QCOMPARE(int(w.placeGpu(kernel(3001, kT0 + 2 * kStep + 5000), &step)), int(StepWindow::Place::Inside));
        QCOMPARE(step, uint64_t(2));
        QCOMPARE(int(w.placeGpu(kernel(4001, kT0 + 3 * kStep + 5000), &step)), int(StepWindow::Place::After));
    }

    void hostEventsPlaceByTime()
    {
        StepWindow w;
        for (int i = 0; i < 2; ++i)
            w.addMarker(marker(i, 100 * uint32_t(i + 1)));
        QVERIFY(w.startSteps(2, 2, 0, kT0 + kStep + 1));
        for (int i = 2; i < 5; ++i)
            w.addMarker(marker(i, 100 * uint32_t(i + 1)));
        uint64_t step = 0;
        QCOMPARE(int(w.placeHost(kT0 + 2 * kStep - 1, &step)), int(StepWindow::Place::Before));
        QCOMPARE(int(w.placeHost(kT0 + 2 * kStep + 5, &step)), int(StepWindow::Place::Inside));
        QCOMPARE(step, uint64_t(2));
        QCOMPARE(int(w.placeHost(kT0 + 3 * kStep + 5, &step)), int(StepWindow::Place::Inside));
        QCOMPARE(step, uint64_t(3));
        QCOMPARE(int(w.placeHost(kT0 + 4 * kStep, &step)), int(StepWindow::Place::After));
    }

    void timeWindow()
    {
        StepWindow w;
        w.startTime(kT0 + 100, kT0 + 200);
        QCOMPARE(int(w.placeGpu(kernel(1, kT0 + 99), nullptr)), int(StepWindow::Place::Before));
        QCOMPARE(int(w.placeGpu(kernel(1, kT0 + 100), nullptr)), int(StepWindow::Place::Inside));
        QCOMPARE(int(w.placeGpu(kernel(1, kT0 + 200), nullptr)), int(StepWindow::Place::After));
        QVERIFY(!w.timeWindowOver(kT0 + 199));
        QVERIFY(w.timeWindowOver(kT0 + 200));
    }

    void stepSpans()
    {
        StepWindow w;
        w.addMarker(marker(0, 100));
        QVERIFY(w.startSteps(1, 3, 50, kT0 + 1));
        for (int i = 1; i < 5; ++i)
            w.addMarker(marker(i, 100 * uint32_t(i + 1)));
        // GPU work per step: [start + 2 ms, start + 9 ms]
        for (int i = 1; i < 4; ++i) {
            w.accountGpu(uint64_t(i), kT0 + i * kStep + 2000000, kT0 + i * kStep + 5000000);
            w.accountGpu(uint64_t(i), kT0 + i * kStep + 4000000, kT0 + i * kStep + 9000000);
        }
        // Not final yet: CUPTI may still deliver earlier records of step 1 or 2.
        QVERIFY(w.takeFinishedSteps(false).empty());
        // Step 1 is final once step 3 has work and enough GPU time has passed since step 2 began.
        w.accountGpu(
            3, kT0 + 2 * kStep + 2000000 + StepWindow::kSettleNs, kT0 + 2 * kStep + 2000001 + StepWindow::kSettleNs);
        auto first = w.takeFinishedSteps(false);
        QCOMPARE(first.size(), size_t(1));
        QCOMPARE(first[0].localIndex, uint64_t(1));
        QCOMPARE(first[0].globalIndex, uint64_t(50));
        QCOMPARE(first[0].start, kT0 + kStep + 2000000);
        QCOMPARE(first[0].end, kT0 + 2 * kStep + 2000000); // next step's start
        auto rest = w.takeFinishedSteps(true);
        QCOMPARE(rest.size(), size_t(2));
        QCOMPARE(rest[1].localIndex, uint64_t(3));
        QCOMPARE(
            rest[1].end, kT0 + 2 * kStep + 2000001 + StepWindow::kSettleNs); // the last step ends at its latest end
        QCOMPARE(w.stepsRecorded(), 3u);
        // Work outside the window is not accounted.
        w.accountGpu(9, kT0, kT0 + 1);
        QCOMPARE(w.highestStepWithWork(), int64_t(3));
        // Work of a step already handed out is counted, with how far it trailed the newest work.
        QCOMPARE(w.workAfterSettle(), uint64_t(0));
        w.accountGpu(1, kT0 + kStep + 1000000, kT0 + kStep + 1500000);
        QCOMPARE(w.workAfterSettle(), uint64_t(1));
        QCOMPARE(w.workAfterSettleMaxNs(), kT0 + 2 * kStep + 2000000 + StepWindow::kSettleNs - (kT0 + kStep + 1000000));
    }

    void evidenceMedians()
    {
        StepWindow w;
        int64_t t = kT0;
        for (int i = 0; i < 21; ++i) {
            StepMarker m;
            m.time = t;
            m.correlation = uint32_t(100 * (i + 1));
            w.addMarker(m);
            t += 10000000; // 10 ms before recording
        }
        QVERIFY(w.startSteps(22, 10, 0, t - 1));
        for (int i = 21; i < 40; ++i) {
            StepMarker m;
            m.time = t;
            m.correlation = uint32_t(100 * (i + 1));
            w.addMarker(m);
            t += 11000000; // 11 ms while recording
        }
        const auto e = w.evidence(); // the 10 ms intervals before recording are StepBaseline's
        QCOMPARE(e.stepsDuring, 10u);
        QCOMPARE(e.stepDuringMs, 11.0);
    }

    void markersStayBoundedWhileDetecting()
    {
        StepWindow w;
        for (int i = 0; i < 100000; ++i)
            w.addMarker(marker(i, uint32_t(i + 1)));
        QCOMPARE(w.stepsSeen(), uint64_t(100000));
        QCOMPARE(w.markerTime(100000 - 1), kT0 + (100000 - 1) * kStep);
        QCOMPARE(w.markerTime(0), int64_t(0)); // trimmed
        QCOMPARE(w.evidence().stepsDuring, 0u);
    }

    void longWindowPlacesPastTheKeptBounds()
    {
        // A long window: bounds behind the newest work are trimmed as the capture goes on, and
        // work of every later step must still land in its own step (it once went to After from
        // the first trim on, because the window's first bound was gone).
        constexpr int kSteps = 2 * int(StepWindow::kKeepBehindWork) + 500;
        StepWindow w;
        w.addMarker(marker(0, 100));
        QVERIFY(w.startSteps(1, kSteps, 0, kT0 + 1));
        auto corr = [](int i) { return 100 * uint32_t(i + 1); };
        for (int i = 1; i <= kSteps + 1; ++i) {
            w.addMarker(marker(i, corr(i)));
            uint64_t step = 0;
            // The previous step's trailing work (an id after its launch) is placed now.
            if (i > 1) {
                QCOMPARE(int(w.placeGpu(kernel(corr(i - 1) + 7, kT0 + i * kStep - 5), &step)),
                    int(StepWindow::Place::Inside));
                QCOMPARE(step, uint64_t(i - 1));
            }
            const auto place = w.placeGpu(kernel(corr(i), kT0 + i * kStep + 5), &step);
            QCOMPARE(int(place), int(i <= kSteps ? StepWindow::Place::Inside : StepWindow::Place::After));
            if (i > kSteps)
                break;
            QCOMPARE(step, uint64_t(i));
            w.accountGpu(step, kT0 + i * kStep + 5, kT0 + i * kStep + 6);
            if (i % 997 == 0) { // host events too, by time
                QCOMPARE(int(w.placeHost(kT0 + i * kStep + 3, &step)), int(StepWindow::Place::Inside));
                QCOMPARE(step, uint64_t(i));
            }
        }
        QCOMPARE(w.markerTime(1), int64_t(0)); // trimmed: memory stays bounded
        QVERIFY(w.markerTime(kSteps - int(StepWindow::kKeepBehindWork)) != 0);
        // A record of a step whose bound is gone cannot be placed: Late (counted as lost).
        QCOMPARE(int(w.placeGpu(kernel(corr(5) + 1, kT0 + 5 * kStep), nullptr)), int(StepWindow::Place::Late));
        QCOMPARE(int(w.placeHost(kT0 + 5 * kStep, nullptr)), int(StepWindow::Place::Late));
        // Before the window stays Before while the start bound is kept.
        StepWindow v;
        v.addMarker(marker(0, 100));
        QVERIFY(v.startSteps(1, 3, 0, kT0 + 1));
        v.addMarker(marker(1, 200));
        QCOMPARE(int(v.placeGpu(kernel(150, kT0), nullptr)), int(StepWindow::Place::Before));
        QCOMPARE(int(v.placeHost(kT0 + 5, nullptr)), int(StepWindow::Place::Before));
    }

    void recordsPastTheNewestMarkerWaitForTheNext()
    {
        // Markers and GPU records are drained in turn: the first kernels of step 2's graph can
        // come before step 2's marker. They must wait, not land in step 1.
        StepWindow w;
        w.addMarker(marker(0, 100));
        QVERIFY(w.startSteps(1, 3, 0, kT0 + 1));
        w.addMarker(marker(1, 200));
        uint64_t step = 99;
        QCOMPARE(int(w.placeGpu(kernel(200, kT0 + kStep), &step)), int(StepWindow::Place::Inside));
        QCOMPARE(step, uint64_t(1));
        QCOMPARE(int(w.placeGpu(kernel(300, kT0 + 2 * kStep), &step)), int(StepWindow::Place::Pending));
        QCOMPARE(int(w.placeGpu(api(201, kT0 + kStep + 1), &step)), int(StepWindow::Place::Pending));
        w.addMarker(marker(2, 300));
        QCOMPARE(int(w.placeGpu(kernel(300, kT0 + 2 * kStep), &step)), int(StepWindow::Place::Inside));
        QCOMPARE(step, uint64_t(2));
        QCOMPARE(int(w.placeGpu(api(201, kT0 + kStep + 1), &step)), int(StepWindow::Place::Inside));
        QCOMPARE(step, uint64_t(1));
        // Work that started before the last marker drain (less the margin) is the newest step's.
        w.setMarkersDrainedAt(kT0 + 2 * kStep + 5 + StepWindow::kDrainMarginNs);
        QCOMPARE(int(w.placeGpu(kernel(350, kT0 + 2 * kStep + 5), &step)), int(StepWindow::Place::Pending));
        w.setMarkersDrainedAt(kT0 + 2 * kStep + 6 + StepWindow::kDrainMarginNs);
        QCOMPARE(int(w.placeGpu(kernel(350, kT0 + 2 * kStep + 5), &step)), int(StepWindow::Place::Inside));
        QCOMPARE(step, uint64_t(2));
        QCOMPARE(int(w.placeGpu(kernel(360, kT0 + 2 * kStep + kStep), &step)), int(StepWindow::Place::Pending));
        // At the window's end no marker will come: the newest step takes what follows its launch.
        w.closeMarkers();
        QCOMPARE(int(w.placeGpu(kernel(360, kT0 + 2 * kStep + kStep), &step)), int(StepWindow::Place::Inside));
        QCOMPARE(step, uint64_t(2));
    }

    void backToDetectingKeepsNumbering()
    {
        StepWindow w;
        w.addMarker(marker(0, 100));
        QVERIFY(w.startSteps(1, 1, 0, kT0 + 1));
        w.addMarker(marker(1, 200));
        w.addMarker(marker(2, 300));
        w.backToDetecting();
        QCOMPARE(w.addMarker(marker(3, 400)), uint64_t(3));
        QCOMPARE(int(w.placeGpu(kernel(250, kT0), nullptr)), int(StepWindow::Place::Before));
    }
};

QTEST_APPLESS_MAIN(TstStepWindow)
#include "tst_stepwindow.moc"
