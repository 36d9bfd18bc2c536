// SPDX-License-Identifier: MIT
// StepsMenu on a real torch.profiler trace of an HF generate() loop (tests/steps/fixtures): it says which
// rule made the steps and how many of each kind, counts what every rule would make (off the GUI thread),
// and a choice emits the rule; the trace opened again with that rule has the steps it counted.
#include "views/analysisrunner.h"
#include "views/stepsmenu.h"
#include "views/tracedocument.h"
#include "views/waterfallpanel.h"
#include "views/workspace.h"

#include <QComboBox>

#include <QSignalSpy>
#include <QtTest>

using namespace gapscope::model;

class TstStepsMenu : public QObject {
    Q_OBJECT
private slots:
    void saysAndCountsAndChooses()
    {
        const QString file = QStringLiteral(GAPSCOPE_SOURCE_DIR "/tests/steps/fixtures/real_hf_eager.json.gz");
        QString error;
        auto doc = TraceDocument::open({ file }, &error);
        QVERIFY2(doc, qPrintable(error));
        QCOMPARE(doc->trace->stepCount(), 12u);
        StepsMenu menu;
        menu.setDocument(doc);
        QStringList texts;
        for (QAction* a : menu.actions())
            texts << a->text();
        QVERIFY2(texts.join('\n').contains(QStringLiteral("Rule in use: auto (forward)")), qPrintable(texts.join('\n')));
        QVERIFY2(texts.join('\n').contains(QStringLiteral("12 steps: 10 decode, 2 prefill")), qPrintable(texts.join('\n')));
        emit menu.aboutToShow(); // counts the candidates on a worker
        auto countOf = [&](const QString& rule) {
            for (QAction* a : menu.ruleActions())
                if (a->data().toString() == rule)
                    return a->text();
            return QString();
        };
        QTRY_VERIFY_WITH_TIMEOUT(countOf(QStringLiteral("forward")).contains(QStringLiteral("12 steps")), 20000);
        QVERIFY2(countOf(QStringLiteral("engine")).contains(QStringLiteral("0 steps")), qPrintable(countOf("engine")));
        QSignalSpy chosen(&menu, &StepsMenu::ruleChosen);
        for (QAction* a : menu.ruleActions())
            if (a->data().toString() == QStringLiteral("engine"))
                a->trigger();
        QCOMPARE(chosen.count(), 1);
        QCOMPARE(chosen.at(0).at(0).toString(), QStringLiteral("engine"));
        auto again = TraceDocument::open({ file }, &error, QStringLiteral("engine"));
        QVERIFY(again);
        QCOMPARE(again->trace->stepCount(), 0u); // no engine annotations in a plain generate() loop
        QCOMPARE(again->trace->stepReport().rule, std::string("engine"));
    }

    // The waterfall looks at decode steps by default; picking prefill leaves the decode steps out instead.
    void kindPicker()
    {
        const QString file = QStringLiteral(GAPSCOPE_SOURCE_DIR "/tests/steps/fixtures/real_hf_eager.json.gz");
        QString error;
        auto doc = TraceDocument::open({ file }, &error);
        QVERIFY2(doc, qPrintable(error));
        Workspace ws;
        ws.analysis()->setAsync(false);
        ws.setDocument(doc);
        QVERIFY(ws.analysis()->runNow());
        QCOMPARE(ws.analysis()->stepKind(), StepKind::Decode);
        QComboBox* kinds = nullptr;
        for (QComboBox* c : ws.findChildren<QComboBox*>())
            if (c->findData(int(StepKind::Prefill)) >= 0 && c->toolTip().contains(QStringLiteral("kind of step")))
                kinds = c;
        QVERIFY(kinds);
        QCOMPARE(kinds->count(), 3); // decode, prefill, every kind
        QCOMPARE(kinds->currentData().toInt(), int(StepKind::Decode));
        QCOMPARE(ws.analysis()->analyzer()->incompleteSteps().size(), size_t(2)); // the two prefills left out
        kinds->setCurrentIndex(kinds->findData(int(StepKind::Prefill)));
        emit kinds->activated(kinds->currentIndex());
        QVERIFY(ws.analysis()->runNow());
        QCOMPARE(ws.analysis()->stepKind(), StepKind::Prefill);
        QCOMPARE(ws.analysis()->analyzer()->incompleteSteps().size(), size_t(10)); // the ten decode steps
        QVERIFY(ws.analysis()->analyzer()->incompleteSteps().front().why.find("a decode step") == 0);
    }
};

QTEST_MAIN(TstStepsMenu)
#include "tst_stepsmenu.moc"
