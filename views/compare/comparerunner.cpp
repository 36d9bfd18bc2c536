// SPDX-License-Identifier: MIT
#include "views/compare/comparerunner.h"

#include "views/compare/compareview.h"
#include "views/document/traceopener.h"

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QMainWindow>
#include <QMessageBox>
#include <QSettings>

struct CompareRunner::Result {
    std::shared_ptr<const Comparison> comparison;
    QString error;
};

CompareRunner::CompareRunner(QMainWindow* window)
    : QObject(window)
    , m_window(window)
{
}

CompareRunner::~CompareRunner() = default;

void CompareRunner::compareWith(
    std::shared_ptr<const TraceDocument> a, const QStringList& paths, const gapscope::model::GapAnalyzer* analyzerOfA)
{
    if (!a || paths.isEmpty())
        return;
    // The same classifier and budget on both sides: A's, as its analysis uses them.
    gapscope::model::KernelClassifier classifier
        = analyzerOfA ? analyzerOfA->classifier() : gapscope::model::KernelClassifier::builtinDefault();
    gapscope::model::StepBudget budget = analyzerOfA ? analyzerOfA->budget() : gapscope::model::StepBudget {};
    emit statusText(tr("Comparing with %1…").arg(QFileInfo(paths.first()).fileName()));
    m_jobs.run(
        this,
        [a = std::move(a), paths, classifier, budget](const JobTracker::Ticket& ticket) {
            Result r;
            if (ticket.stale()) // a newer comparison has been asked for: skip the work
                return r;
            QString error;
            std::shared_ptr<const TraceDocument> b = TraceDocument::open(paths, &error);
            if (!b)
                r.error = error;
            else
                r.comparison = Comparison::make(a, b, classifier, budget);
            return r;
        },
        [paths](CompareRunner& self, const Result& r) { self.finish(paths, r); },
        [](Result r) { TraceOpener::releaseLater(std::move(r.comparison)); }); // superseded: freed off the GUI thread
}

void CompareRunner::finish(const QStringList& paths, const Result& r)
{
    if (!r.comparison) {
        emit statusText(tr("Compare failed"));
        QMessageBox::warning(m_window, tr("Compare with"), r.error);
        return;
    }
    if (!m_view) {
        m_view = new CompareView;
        m_dock = new QDockWidget(tr("Compare"), m_window);
        m_dock->setObjectName(QStringLiteral("compare"));
        m_dock->setWidget(m_view);
        m_window->addDockWidget(Qt::BottomDockWidgetArea, m_dock);
    }
    m_view->setComparison(r.comparison);
    m_dock->show();
    m_dock->raise();
    emit statusText(tr("Compared with %1").arg(QFileInfo(paths.first()).fileName()));
    emit shown();
}

void CompareRunner::exportImageDialog()
{
    if (!m_view || !m_view->comparison())
        return;
    QSettings settings;
    const QString suggested = settings.value(QStringLiteral("exportDir"), QDir::homePath()).toString()
        + QLatin1Char('/') + QFileInfo(m_view->comparison()->a->displayName()).completeBaseName()
        + QStringLiteral("-compare.png");
    const QString path = QFileDialog::getSaveFileName(
        m_window, tr("Export comparison image"), suggested, tr("PNG image (*.png);;SVG image (*.svg)"));
    if (path.isEmpty())
        return;
    settings.setValue(QStringLiteral("exportDir"), QFileInfo(path).absolutePath());
    const QSize size = m_view->size().expandedTo(QSize(320, 200));
    const QString err = m_view->exportImage(path, size, path.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive));
    if (!err.isEmpty())
        QMessageBox::warning(m_window, tr("Export failed"), err);
    else
        emit message(tr("Exported %1").arg(path));
}
