// SPDX-License-Identifier: MIT
// The main window's first impression: the first start (no saved settings) fills the screen's available
// area; a later start comes back at the size and state the window was closed with.
#include "app/gui/mainwindow.h"

#include <QApplication>
#include <QScreen>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

class TstMainWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QVERIFY(m_settingsDir.isValid());
        QCoreApplication::setOrganizationName(QStringLiteral("gapscope-test"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_mainwindow"));
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_settingsDir.path());
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_settingsDir.path());
        QSettings().clear();
    }

    void firstStartFillsTheScreen()
    {
        QVERIFY(!QSettings().contains(QStringLiteral("window/geometry")));
        MainWindow w;
        w.showAsRemembered();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.isMaximized());
        const QRect avail = w.screen()->availableGeometry();
        QTRY_COMPARE(w.frameGeometry().size(), avail.size());
        w.close();
        QVERIFY(QSettings().contains(QStringLiteral("window/geometry")));
    }

    void laterStartRestoresTheClosedGeometry()
    {
        QSize closed;
        {
            MainWindow w;
            w.showAsRemembered(); // maximised, as saved by the first start
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            QTRY_VERIFY(w.isMaximized());
            w.showNormal();
            // Restored (not maximised) at some size of its own: that size and state come back.
            const QSize avail = w.screen()->availableGeometry().size();
            w.resize(avail - QSize(40, 30));
            QTest::qWait(50);
            QVERIFY(!w.isMaximized());
            closed = w.size();
            w.close();
        }
        MainWindow w;
        w.showAsRemembered();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(!w.isMaximized());
        QCOMPARE(w.size(), closed);
    }

private:
    QTemporaryDir m_settingsDir;
};

QTEST_MAIN(TstMainWindow)
#include "tst_mainwindow.moc"
