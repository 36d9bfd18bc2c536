// SPDX-License-Identifier: MIT
#pragma once

// MainWindow: the gapscope window. The Workspace (timeline, waterfall, tables) is the central
// widget; details, budget and annotations are docks. Traces open from the menu, the command line,
// drag-and-drop and the recent-files menu, in the background (TraceOpener) with a progress bar in
// the status bar; the window stays responsive and a newer open supersedes an older one. Window
// geometry, dock layout and lane options (WindowLayout) and recent files (RecentFiles) are kept in
// QSettings (the step rule chosen for a trace is kept with its annotations, not here). The window
// builds the File, Steps and Live menus and wires them; the View menu (ViewMenu), the Help menu
// (HelpMenu) and the File menu's dialogs (FileDialogs) are their own classes.
//
// File > Compare with… opens a second trace (B) in the background and compares the shown one (A)
// with it in the "Compare" dock (CompareRunner runs the job and owns the dock and its image export;
// CompareView: the same comparison as `gapscope-cli diff`).
//
// The Live menu holds "Connect to agent…" (connectToAgent()), the entry point of the live
// connection: streaming from a capture agent into the open workspace.
//
// Threading: GUI thread.

#include "app/gui/windowlayout.h"
#include "views/compare/comparerunner.h"
#include "views/document/tracedocument.h"
#include "views/document/traceopener.h"

#include <QElapsedTimer>
#include <QMainWindow>
#include <QPointer>

#include <memory>

class CompareView;
class LivePanel;
class LiveSession;
class QAction;
class QDockWidget;
class QLabel;
class QMessageBox;
class QProgressBar;
class QToolButton;
class RecentFiles;
class StepsMenu;
class Workspace;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    Workspace* workspace() const { return m_workspace; }
    TraceOpener* opener() const { return m_opener; }
    // Shows the window: maximised on the first start (no saved geometry), else as it was last closed.
    void showAsRemembered();
    // Opens one trace (or several files forming one trace) in the background.
    // stepRule: how to find the steps (model/steps/steprule.h); empty: the rule saved with the trace's
    // annotations (chosen in the Steps menu; TraceDocument::loader), else the default (a capture's
    // stored steps, auto for other traces).
    void openFiles(const QStringList& paths, const QString& stepRule = {});
    // The bundled sample (resources/samples/*.gapscope), "" when there is none.
    static QString samplePath();
    // Milliseconds from the last openFiles() call to the first paint of its trace (-1: not yet).
    qint64 firstPaintMs() const { return m_firstPaintMs; }
    // The live capture shown in the workspace (nullptr before the first "Connect to agent…").
    LiveSession* liveSession() const { return m_live; }
    // Loading: the progress bar and its Cancel button in the status bar; the last load error's
    // dialog (non-modal; null once closed), which names the file and, for a parse error, the byte.
    QProgressBar* loadProgress() const { return m_progress; }
    QToolButton* cancelLoadButton() const { return m_cancel; }
    QMessageBox* errorDialog() const;
    // Compares the shown trace (A) with the trace of `paths` (B), opened and analysed in the background
    // with A's classifier and budget; the result shows in the Compare dock (comparisonShown()).
    void compareWith(const QStringList& paths);
    CompareView* compareView() const { return m_compare->view(); }

public slots:
    void openDialog();
    void exportDialog();
    void exportPerfettoDialog();
    void compareDialog();
    void exportComparisonDialog();
    void connectToAgent();
    // Writes the shown trace (or the live capture) as a .gapscope file.
    void saveTraceDialog();
    // Docks and the timeline/tables split as on a first start (View > Reset layout).
    void resetLayout();

signals:
    void documentShown();
    void firstPaint(qint64 ms);
    void comparisonShown();

protected:
    void closeEvent(QCloseEvent* e) override;
    void dragEnterEvent(QDragEnterEvent* e) override;
    void dropEvent(QDropEvent* e) override;

private:
    // openFiles() without asking about unsaved annotations (the Steps menu's reopen carries them).
    void loadFiles(const QStringList& paths, const QString& stepRule);
    void buildMenus();
    void buildDocks();
    void onLoaded(const std::shared_ptr<LoadedTrace>& loaded);
    void onFailed(const QStringList& paths, const QString& message);
    bool confirmUnsavedAnnotations();
    void showMessage(const QString& text); // for 8 s in the status bar; nothing when empty
    void ensureLiveSession();

    Workspace* m_workspace;
    TraceOpener* m_opener;
    RecentFiles* m_recent = nullptr;
    StepsMenu* m_steps = nullptr;
    QProgressBar* m_progress;
    QToolButton* m_cancel;
    QLabel* m_status;
    QPointer<QMessageBox> m_error;
    QAction* m_connectAction = nullptr;
    LiveSession* m_live = nullptr;
    LivePanel* m_livePanel = nullptr;
    QDockWidget* m_liveDock = nullptr;
    CompareRunner* m_compare; // Compare with…: the background job, the Compare dock, its export
    WindowLayout m_layout; // geometry, docks, split and lane options kept in QSettings
    QAction* m_exportComparison = nullptr;
    std::shared_ptr<const TraceDocument> m_doc;
    QElapsedTimer m_openTimer;
    qint64 m_firstPaintMs = -1;
    bool m_waitingFirstPaint = false;
};
