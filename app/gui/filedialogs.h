// SPDX-License-Identifier: MIT
#pragma once

// FileDialogs: the File menu's file dialogs and what follows them. askTraces() picks trace files (the
// formats gapscope reads) for File > Open and File > Compare with…, starting in the folder of the
// last pick (setting "lastDir", kept). exportImage() and exportPerfetto() ask where to write the
// workspace's picture (PNG, or SVG by the name) or its Perfetto trace (the whole trace or, when the
// user says so, the steps selected in the step table), starting in setting "exportDir" (kept), write
// it, and show a warning when that fails. They return the status bar's message on success, "" when
// nothing was written (no trace, cancelled, failed).
//
// Threading: GUI thread; the writing runs there too, as the menu actions always did.

#include <QCoreApplication>
#include <QStringList>

class QWidget;
class Workspace;

class FileDialogs {
    Q_DECLARE_TR_FUNCTIONS(FileDialogs)
public:
    static QStringList askTraces(QWidget* parent, const QString& title);
    static QString exportImage(QWidget* parent, Workspace* workspace);
    static QString exportPerfetto(QWidget* parent, Workspace* workspace);
    static QString exportHtml(QWidget* parent, Workspace* workspace);
};
