// SPDX-License-Identifier: MIT
#include "app/gui/filedialogs.h"

#include "views/document/tracedocument.h"
#include "views/document/workspace.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QSettings>

QStringList FileDialogs::askTraces(QWidget* parent, const QString& title)
{
    QSettings settings;
    QStringList files
        = QFileDialog::getOpenFileNames(parent, title, settings.value(QStringLiteral("lastDir")).toString(),
            tr("Traces (*.gapscope *.json *.json.gz *.pt.trace.json *.sqlite *.nvvp *.db *.csv *.pftrace "
               "*.perfetto-trace);;All files (*)"));
    if (!files.isEmpty())
        settings.setValue(QStringLiteral("lastDir"), QFileInfo(files.first()).absolutePath());
    return files;
}

QString FileDialogs::exportImage(QWidget* parent, Workspace* workspace)
{
    if (!workspace->document())
        return {};
    QSettings settings;
    QString suggested = settings.value(QStringLiteral("exportDir"), QDir::homePath()).toString() + QLatin1Char('/')
        + QFileInfo(workspace->document()->displayName()).completeBaseName() + QStringLiteral(".png");
    const QString path = QFileDialog::getSaveFileName(
        parent, tr("Export image"), suggested, tr("PNG image (*.png);;SVG image (*.svg)"));
    if (path.isEmpty())
        return {};
    settings.setValue(QStringLiteral("exportDir"), QFileInfo(path).absolutePath());
    const QString err = workspace->exportImage(
        path, workspace->screenExportSize(), path.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive));
    if (!err.isEmpty()) {
        QMessageBox::warning(parent, tr("Export failed"), err);
        return {};
    }
    return tr("Exported %1").arg(path);
}

// The whole trace, or the steps selected in the step table (asked when some are), for ui.perfetto.dev.
QString FileDialogs::exportHtml(QWidget* parent, Workspace* workspace)
{
    if (!workspace->document())
        return {};
    QSettings settings;
    const QString suggested = settings.value(QStringLiteral("exportDir"), QDir::homePath()).toString()
        + QLatin1Char('/') + QFileInfo(workspace->document()->displayName()).completeBaseName()
        + QStringLiteral(".html");
    const QString path
        = QFileDialog::getSaveFileName(parent, tr("Export HTML report"), suggested, tr("HTML report (*.html)"));
    if (path.isEmpty())
        return {};
    settings.setValue(QStringLiteral("exportDir"), QFileInfo(path).absolutePath());
    const QString err = workspace->exportHtml(path);
    if (!err.isEmpty()) {
        QMessageBox::warning(parent, tr("Export failed"), err);
        return {};
    }
    return tr("Exported %1 (open it in any browser)").arg(path);
}

QString FileDialogs::exportPerfetto(QWidget* parent, Workspace* workspace)
{
    if (!workspace->document())
        return {};
    bool selected = false;
    if (const auto steps = workspace->selectedSteps(); steps && steps->first <= steps->second) {
        const auto answer = QMessageBox::question(parent, tr("Export Perfetto trace"),
            tr("Export the selected steps %1 to %2 only? (No: the whole trace)").arg(steps->first).arg(steps->second),
            QMessageBox::Yes | QMessageBox::No | QMessageBox::Cancel, QMessageBox::Yes);
        if (answer == QMessageBox::Cancel)
            return {};
        selected = answer == QMessageBox::Yes;
    }
    QSettings settings;
    const QString suggested = settings.value(QStringLiteral("exportDir"), QDir::homePath()).toString()
        + QLatin1Char('/') + QFileInfo(workspace->document()->displayName()).completeBaseName()
        + QStringLiteral(".pftrace");
    const QString path = QFileDialog::getSaveFileName(
        parent, tr("Export Perfetto trace"), suggested, tr("Perfetto trace (*.pftrace *.perfetto-trace)"));
    if (path.isEmpty())
        return {};
    settings.setValue(QStringLiteral("exportDir"), QFileInfo(path).absolutePath());
    const QString err = workspace->exportPerfetto(path, selected);
    if (!err.isEmpty()) {
        QMessageBox::warning(parent, tr("Export failed"), err);
        return {};
    }
    return tr("Exported %1 (open it in ui.perfetto.dev)").arg(path);
}
