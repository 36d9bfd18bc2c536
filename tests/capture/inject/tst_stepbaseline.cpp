// SPDX-License-Identifier: MIT
// StepBaseline: the process's step-time baseline and each arm's steps before recording, across
// captures that detach CUPTI, captures that leave it attached, arms that never record, and too few
// steps.
#include "capture/inject/stepbaseline.h"

#include <QtTest>

#include <cmath>

using namespace gapscope::capture::inject;
using AttachState = Tracer::AttachState;
using AfterLast = StepBaseline::AfterLast;

namespace {

// One arm: `n` pre-recording intervals of `ms`, then recording when `record`.
void arm(StepBaseline& b, AttachState now, int n, double ms, bool record = true)
{
    b.beginArm(now);
    for (int i = 0; i < n; ++i)
        b.addInterval(ms);
    if (record)
        b.recordingStarted();
}

} // namespace

class TstStepBaseline : public QObject {
    Q_OBJECT
private slots:
    void medianOfEvenAndOddCounts()
    {
        QCOMPARE(intervalMedian({}), 0.0);
        QCOMPARE(intervalMedian({ 3, 1, 2 }), 2.0);
        QCOMPARE(intervalMedian({ 4, 1, 3, 2 }), 2.5);
    }

    void stepTimeIsTheMeanWithoutPauses()
    {
        QCOMPARE(stepTimeMs({}), 0.0);
        // A loop that syncs every 20 steps: 19 launches of 0.11 ms, then the wait for the GPU.
        std::vector<double> burst;
        for (int block = 0; block < 10; ++block) {
            burst.insert(burst.end(), 19, 0.11);
            burst.push_back(20 * 0.96 - 19 * 0.11);
        }
        QVERIFY(std::abs(stepTimeMs(burst) - 0.96) < 1e-9);
        QCOMPARE(intervalMedian(burst), 0.11);
        // A server idle for 5 s between requests: the pause is not a step.
        QCOMPARE(stepTimeMs({ 10, 10, 10, 10, 5000 }), 10.0);
        // A slow step is no pause: under kPauseFactor times the median.
        QCOMPARE(stepTimeMs({ 200, 200, 1000 }), 1400.0 / 3);
    }

    void firstCaptureBaselineIsItsOwnSteps()
    {
        StepBaseline b;
        arm(b, AttachState::Never, 60, 2.0, false);
        const auto r = b.report();
        QCOMPARE(r.baseline.steps, 60u);
        QCOMPARE(r.baseline.medianMs, 2.0);
        QCOMPARE(r.before.steps, 60u);
        QCOMPARE(r.before.medianMs, 2.0);
        QCOMPARE(r.capturesBefore, 0u);
        QCOMPARE(r.baselineCapturesBefore, 0u);
        QCOMPARE(r.afterLast, AfterLast::NoCapture);
    }

    void fewStepsAreCountedAsFew()
    {
        StepBaseline b;
        arm(b, AttachState::Never, 7, 5.0);
        const auto r = b.report();
        QCOMPARE(r.baseline.steps, 7u);
        QCOMPARE(r.before.steps, 7u);
        QCOMPARE(r.baseline.medianMs, 5.0);
        b.addInterval(99); // after recording went on: not a step before it
        QCOMPARE(b.report().before.steps, 7u);
    }

    void baselineRollsOverTheLast200()
    {
        StepBaseline b;
        b.beginArm(AttachState::Never);
        for (int i = 0; i < 100; ++i)
            b.addInterval(1.0);
        for (int i = 0; i < 200; ++i)
            b.addInterval(3.0);
        const auto r = b.report();
        QCOMPARE(r.baseline.steps, uint32_t(StepBaseline::kKeep));
        QCOMPARE(r.baseline.medianMs, 3.0);
        QCOMPARE(r.before.steps, uint32_t(StepBaseline::kKeep));
        QCOMPARE(r.before.medianMs, 3.0);
    }

    void detachedCaptureRefreshesTheBaselineAfterwards()
    {
        StepBaseline b;
        arm(b, AttachState::Never, 60, 2.0);
        arm(b, AttachState::Detached, 60, 2.2, false);
        auto r = b.report();
        QCOMPARE(r.capturesBefore, 1u);
        QCOMPARE(r.afterLast, AfterLast::Detached);
        QCOMPARE(r.before.steps, 60u); // after the last capture
        QCOMPARE(r.before.medianMs, 2.2);
        QCOMPARE(r.baseline.steps, 60u); // as it stood at the arm: never compared with itself
        QCOMPARE(r.baseline.medianMs, 2.0);
        QCOMPARE(r.baselineCapturesBefore, 0u);
        QVERIFY(b.refreshing());
        b.recordingStarted();
        arm(b, AttachState::Detached, 10, 2.4, false);
        r = b.report();
        QCOMPARE(r.capturesBefore, 2u);
        QCOMPARE(r.baseline.steps, 120u); // the second arm's steps joined it
        QCOMPARE(r.baseline.medianMs, 2.1);
        QCOMPARE(r.baselineCapturesBefore, 1u);
        QCOMPARE(r.before.steps, 10u);
    }

    void captureLeftAttachedFreezesTheBaseline()
    {
        StepBaseline b;
        arm(b, AttachState::Never, 60, 2.0);
        arm(b, AttachState::Idle, 80, 2.6);
        auto r = b.report();
        QCOMPARE(r.afterLast, AfterLast::StillAttached);
        QCOMPARE(r.capturesBefore, 1u);
        QCOMPARE(r.before.medianMs, 2.6);
        QVERIFY(!b.refreshing());
        arm(b, AttachState::Idle, 80, 2.6, false);
        r = b.report();
        QCOMPARE(r.capturesBefore, 2u);
        QCOMPARE(r.baseline.steps, 60u); // frozen: the 160 slowed steps are not in it
        QCOMPARE(r.baseline.medianMs, 2.0);
        QCOMPARE(r.baselineCapturesBefore, 0u);
        // A later capture that detached lets it refresh again.
        b.recordingStarted();
        arm(b, AttachState::Detached, 60, 2.0);
        arm(b, AttachState::Detached, 0, 0, false);
        r = b.report();
        QCOMPARE(r.baseline.steps, 120u);
        QCOMPARE(r.baselineCapturesBefore, 3u);
    }

    void pendingDetachCountsAsAttached()
    {
        StepBaseline b;
        arm(b, AttachState::Never, 60, 2.0);
        arm(b, AttachState::DetachPending, 60, 3.0, false);
        QCOMPARE(b.report().afterLast, AfterLast::DetachPending);
        QVERIFY(!b.refreshing());
        QCOMPARE(b.report().baseline.steps, 60u);
    }

    void armsWithoutRecordingAreNoCapture()
    {
        StepBaseline b;
        arm(b, AttachState::Never, 30, 2.0, false);
        arm(b, AttachState::Never, 30, 2.0);
        const auto r = b.report();
        QCOMPARE(r.capturesBefore, 0u);
        QCOMPARE(r.baseline.steps, 60u);
        QCOMPARE(r.before.steps, 30u);
        b.recordingStarted(); // a second plan of the same arm
        QCOMPARE(b.captures(), 1u);
    }
};

QTEST_GUILESS_MAIN(TstStepBaseline)
#include "tst_stepbaseline.moc"
