// SPDX-License-Identifier: MIT
// StepsMenu on a real torch.profiler trace of an HF generate() loop (tests/steps/fixtures): it says which
// rule made the steps and how many of each kind, counts what every rule would make (off the GUI thread),
// and a choice emits the rule; the trace opened again with that rule has the steps it counted.
#include "model/open/traceopen.h"
#include "views/analysis/analysisrunner.h"
#include "views/analysis/stepsmenu.h"
#include "views/analysis/waterfallpanel.h"
#include "views/annotations/annotationmodel.h"
#include "views/annotations/annotationstore.h"
#include "views/document/tracedocument.h"
#include "views/document/workspace.h"

#include <QComboBox>
#include <QFile>
#include <QTemporaryDir>

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

    // The rule picked in the Steps menu joins the annotations: the trace opened again with it keeps the
    // edit (still to be saved), saving stores it (in a .gapscope file's annotation section, else in the
    // sidecar of an import), and the trace opens with it again with no rule asked for.
    void ruleSurvivesSaveAndReopen_data()
    {
        QTest::addColumn<bool>("gapscope");
        QTest::newRow("import, sidecar") << false;
        QTest::newRow(".gapscope file") << true;
    }
    void ruleSurvivesSaveAndReopen()
    {
        QFETCH(bool, gapscope);
        QTemporaryDir dir;
        const QString fixture = QStringLiteral(GAPSCOPE_SOURCE_DIR "/tests/steps/fixtures/real_hf_eager.json.gz");
        QString file = dir.filePath(QStringLiteral("hf.json.gz"));
        QString error;
        if (gapscope) {
            auto src = TraceDocument::open({ fixture }, &error);
            QVERIFY2(src, qPrintable(error));
            file = dir.filePath(QStringLiteral("hf.gapscope"));
            QVERIFY(writeTraceFile(*src->trace, file.toStdString()).isOk());
        } else {
            QVERIFY(QFile::copy(fixture, file));
        }
        auto doc = TraceDocument::open({ file }, &error);
        QVERIFY2(doc, qPrintable(error));
        QCOMPARE(doc->trace->stepReport().rule, std::string(gapscope ? "file" : "auto"));
        Workspace ws;
        ws.analysis()->setAsync(false);
        ws.setDocument(doc);
        QVERIFY(!ws.annotations()->isModified());
        ws.chooseStepRule(QStringLiteral("engine")); // what the main window does on StepsMenu::ruleChosen
        QVERIFY(ws.annotations()->isModified());
        auto again = TraceDocument::open({ file }, &error, QStringLiteral("engine"));
        QVERIFY(again);
        ws.setDocument(again);
        QCOMPARE(ws.annotations()->stepRule(), std::string("engine")); // kept across the reopen
        QVERIFY(ws.annotations()->isModified());
        QString where;
        QCOMPARE(ws.saveAnnotations(&where), QString());
        QCOMPARE(QFile::exists(annotationstore::sidecarPath(file)), !gapscope);
        auto reopened = TraceDocument::open({ file }, &error); // no rule asked for
        QVERIFY2(reopened, qPrintable(error));
        QCOMPARE(reopened->trace->stepReport().rule, std::string("engine"));
        QCOMPARE(reopened->trace->stepCount(), 0u); // no engine annotations in a plain generate() loop
        ws.setDocument(reopened);
        QCOMPARE(ws.annotations()->stepRule(), std::string("engine"));
        QVERIFY(!ws.annotations()->isModified());
        if (gapscope) { // the CLI's door too
            auto t = openTrace({ file.toStdString() });
            QVERIFY(t);
            QCOMPARE(t->stepReport().rule, std::string("engine"));
        }
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
