// SPDX-License-Identifier: MIT
// A capture's record of its own cost as gapscope-cli prints it and as `capture_overhead` in JSON:
// against the baseline when the rank sent one, after the last capture, few steps, no steps at all
// (time window), and files of older ranks (no baseline).
#include "model/trace/captureoverhead.h"

#include <QtTest>

using namespace gapscope;
using namespace gapscope::model;

namespace {

OverheadEvidence firstCapture()
{
    OverheadEvidence o;
    o.baselineSteps = 200;
    o.stepMsMedianBaseline = 2.0;
    o.stepsBefore = 200;
    o.stepMsMedianBefore = 2.0;
    o.stepsDuring = 20;
    o.stepMsMedianDuring = 2.5;
    o.armLatencyMs = 4.25;
    return o;
}

OverheadEvidence thirdCapture(OverheadEvidence::CuptiAfterLast after)
{
    OverheadEvidence o = firstCapture();
    o.stepsBefore = 60;
    o.stepMsMedianBefore = 2.2;
    o.capturesBefore = 2;
    o.cuptiAfterLast = after;
    return o;
}

} // namespace

Q_DECLARE_METATYPE(gapscope::model::OverheadEvidence)

class TstCaptureOverhead : public QObject {
    Q_OBJECT
private slots:
    void line_data()
    {
        QTest::addColumn<OverheadEvidence>("evidence");
        QTest::addColumn<bool>("timeWindow");
        QTest::addColumn<QString>("line");
        QTest::newRow("first capture") << firstCapture() << false
                                       << "step 2.000 ms before the first capture (baseline, 200 steps); 2.500 ms "
                                          "while capturing (+25.0 %, 20 steps, fewer than 50); arm latency 4.2 ms";
        QTest::newRow("after detached captures")
            << thirdCapture(OverheadEvidence::CuptiAfterLast::Detached) << false
            << "step 2.000 ms before the first capture (baseline, 200 steps); 2.200 ms after the last capture "
               "(+10.0 %, 60 steps, 2 captures before, CUPTI detached); 2.500 ms while capturing (+25.0 %, 20 steps, "
               "fewer than 50); arm latency 4.2 ms";
        OverheadEvidence refreshed = thirdCapture(OverheadEvidence::CuptiAfterLast::Detached);
        refreshed.baselineCapturesBefore = 1;
        refreshed.capturesBefore = 1;
        refreshed.armLatencyMs = 0;
        QTest::newRow("refreshed baseline")
            << refreshed << false
            << "step 2.000 ms baseline (200 steps, refreshed after 1 capture with CUPTI detached); 2.200 ms after "
               "the last capture (+10.0 %, 60 steps, 1 capture before, CUPTI detached); 2.500 ms while capturing "
               "(+25.0 %, 20 steps, fewer than 50)";
        OverheadEvidence attached = thirdCapture(OverheadEvidence::CuptiAfterLast::StillAttached);
        attached.stepsBefore = 0;
        attached.stepMsMedianBefore = 0;
        QTest::newRow("still attached, no steps before")
            << attached << false
            << "step 2.000 ms before the first capture (baseline, 200 steps); after the last capture: no step "
               "boundaries before recording (2 captures before, CUPTI still attached); 2.500 ms while capturing "
               "(+25.0 %, 20 steps, fewer than 50); arm latency 4.2 ms";
        OverheadEvidence few = firstCapture();
        few.baselineSteps = few.stepsBefore = 7;
        QTest::newRow("few steps") << few << false
                                   << "step 2.000 ms before the first capture (baseline, 7 steps, fewer than 50); "
                                      "2.500 ms while capturing (+25.0 %, 20 steps, fewer than 50); arm latency 4.2 ms";
        QTest::newRow("time window, eager")
            << OverheadEvidence() << true << "no step boundaries while armed (time window)";
        OverheadEvidence eagerAgain;
        eagerAgain.capturesBefore = 1;
        eagerAgain.cuptiAfterLast = OverheadEvidence::CuptiAfterLast::Detached;
        QTest::newRow("time window, captured before")
            << eagerAgain << true << "no step boundaries while armed (time window); 1 capture before, CUPTI detached";
        OverheadEvidence older; // a file of a rank without the baseline
        older.stepsBefore = 2;
        older.stepMsMedianBefore = 50.0;
        older.stepsDuring = 20;
        older.stepMsMedianDuring = 51.0;
        QTest::newRow("older rank") << older << false
                                    << "step 50.000 ms before arming (2 steps, fewer than 50); 51.000 ms while "
                                       "capturing (+2.0 %, 20 steps, fewer than 50)";
        OverheadEvidence noDuring = firstCapture();
        noDuring.stepsDuring = 0;
        noDuring.stepMsMedianDuring = 0;
        QTest::newRow("nothing while capturing")
            << noDuring << true
            << "step 2.000 ms before the first capture (baseline, 200 steps); no step boundaries while capturing "
               "(time window); arm latency 4.2 ms";
    }
    void line()
    {
        QFETCH(OverheadEvidence, evidence);
        QFETCH(bool, timeWindow);
        QFETCH(QString, line);
        QCOMPARE(QString::fromStdString(captureOverheadLine(evidence, timeWindow)), line);
    }

    void lastingNoteOnlyWhenCuptiStayedAttached_data()
    {
        QTest::addColumn<OverheadEvidence>("evidence");
        QTest::addColumn<QString>("cost"); // the figure the note names; "-": no note
        QTest::newRow("first capture") << firstCapture() << "-";
        QTest::newRow("detached") << thirdCapture(OverheadEvidence::CuptiAfterLast::Detached) << "-";
        QTest::newRow("detach pending") << thirdCapture(OverheadEvidence::CuptiAfterLast::DetachPending) << "-";
        QTest::newRow("still attached") << thirdCapture(OverheadEvidence::CuptiAfterLast::StillAttached)
                                        << " (+10.0 % against the baseline now)";
        OverheadEvidence noBaseline = thirdCapture(OverheadEvidence::CuptiAfterLast::StillAttached);
        noBaseline.baselineSteps = 0;
        noBaseline.stepMsMedianBaseline = 0;
        QTest::newRow("still attached, no baseline") << noBaseline << "";
    }
    void lastingNoteOnlyWhenCuptiStayedAttached()
    {
        QFETCH(OverheadEvidence, evidence);
        QFETCH(QString, cost);
        const QString note = QString::fromStdString(captureLastingNote(evidence));
        if (cost == "-") {
            QVERIFY2(note.isEmpty(), qPrintable(note));
            return;
        }
        QVERIFY2(note.startsWith(
                     "the last capture left CUPTI attached, and the process keeps its cost" + cost + " until it exits"),
            qPrintable(note));
        QVERIFY(note.contains("--whole-replays"));
    }

    void percentAgainstTheBaselineWhenThereIsOne()
    {
        OverheadEvidence o = thirdCapture(OverheadEvidence::CuptiAfterLast::Detached);
        o.stepMsMedianBaseline = 2.4; // the process got faster since: the baseline is what counts
        QVERIFY(againstBaseline(o));
        QCOMPARE(captureOverheadReferenceMs(o), 2.4);
        QCOMPARE(captureOverheadPct(o), 100.0 * (2.5 - 2.4) / 2.4);
        double lasting = 0;
        QVERIFY(captureLastingPct(o, &lasting));
        QCOMPARE(lasting, 100.0 * (2.2 - 2.4) / 2.4);
        o.baselineSteps = 0; // an older rank: against this capture's own steps before recording
        QVERIFY(!againstBaseline(o));
        QCOMPARE(captureOverheadPct(o), 100.0 * (2.5 - 2.2) / 2.2);
        QVERIFY(!captureLastingPct(o, &lasting));
    }

    void json()
    {
        const json::Value first = captureOverheadJson(firstCapture());
        QCOMPARE(first["against"].toString(), std::string("baseline"));
        QCOMPARE(first["pct"].toDouble(), 25.0);
        QCOMPARE(first["steps_before"].toInt(), int64_t(200)); // the old keys stay
        QCOMPARE(first["before_ms"].toDouble(), 2.0);
        QCOMPARE(first["steps_during"].toInt(), int64_t(20));
        QCOMPARE(first["during_ms"].toDouble(), 2.5);
        QCOMPARE(first["arm_latency_ms"].toDouble(), 4.25);
        QCOMPARE(first["baseline_steps"].toInt(), int64_t(200));
        QCOMPARE(first["baseline_ms"].toDouble(), 2.0);
        QCOMPARE(first["captures_before"].toInt(), int64_t(0));
        QCOMPARE(first["cupti_after_last"].toString(), std::string("none"));
        QCOMPARE(first["min_steps"].toInt(), int64_t(50));
        QVERIFY(!first.contains("after_last_ms"));

        const json::Value third = captureOverheadJson(thirdCapture(OverheadEvidence::CuptiAfterLast::StillAttached));
        QCOMPARE(third["captures_before"].toInt(), int64_t(2));
        QCOMPARE(third["cupti_after_last"].toString(), std::string("still attached"));
        QCOMPARE(third["after_last_steps"].toInt(), int64_t(60));
        QCOMPARE(third["after_last_ms"].toDouble(), 2.2);
        QCOMPARE(third["after_last_pct"].toDouble(), 100.0 * (2.2 - 2.0) / 2.0);

        OverheadEvidence older;
        older.stepsBefore = 2;
        older.stepMsMedianBefore = 50.0;
        older.stepsDuring = 20;
        older.stepMsMedianDuring = 51.0;
        const json::Value o = captureOverheadJson(older);
        QCOMPARE(o["against"].toString(), std::string("before"));
        QCOMPARE(o["pct"].toDouble(), 2.0);
        QCOMPARE(o["baseline_steps"].toInt(), int64_t(0));
    }

    void headerLookup()
    {
        TraceHeader h;
        RankInfo& r0 = h.ranks.emplace_back();
        r0.rank = 0;
        r0.hasOverhead = true; // a time window: evidence, but nothing to measure against
        RankInfo& r1 = h.ranks.emplace_back();
        r1.rank = 1;
        r1.hasOverhead = true;
        r1.overhead = firstCapture();
        QVERIFY(rankOverheadEvidence(h, 0));
        QVERIFY(!captureOverhead(h, 0));
        QCOMPARE(captureOverhead(h, 1), &h.ranks[1].overhead);
        QVERIFY(!rankOverheadEvidence(h, 2));
    }
};

QTEST_GUILESS_MAIN(TstCaptureOverhead)
#include "tst_captureoverhead.moc"
