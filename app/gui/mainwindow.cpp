// SPDX-License-Identifier: MIT
#include "app/gui/mainwindow.h"

#include "app/gui/filedialogs.h"
#include "app/gui/helpmenu.h"
#include "app/gui/recentfiles.h"
#include "app/gui/viewmenu.h"
#include "views/analysis/budgetpanel.h"
#include "views/analysis/querypanel.h"
#include "views/analysis/stepsmenu.h"
#include "views/annotations/annotationmodel.h"
#include "views/annotations/annotationpanel.h"
#include "views/compare/comparerunner.h"
#include "views/document/workspace.h"
#include "views/timeline/detailspane.h"
#include "views/timeline/timelinewidget.h"

#ifdef GAPSCOPE_HAVE_LIVE
#include "views/live/connectdialog.h"
#include "views/live/livepanel.h"
#include "views/live/livesession.h"
#endif

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QScrollArea>
#include <QStatusBar>
#include <QToolButton>

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
    , m_workspace(new Workspace)
    , m_opener(new TraceOpener(this))
    , m_progress(new QProgressBar)
    , m_cancel(new QToolButton)
    , m_status(new QLabel)
    , m_compare(new CompareRunner(this))
    , m_layout(this, m_workspace)
{
    setWindowTitle(QStringLiteral("gapscope"));
    setAcceptDrops(true);
    setCentralWidget(m_workspace);
    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(240);
    m_progress->hide();
    m_cancel->setText(tr("Cancel"));
    m_cancel->setToolTip(tr("Stop opening this trace"));
    m_cancel->hide();
    connect(m_cancel, &QToolButton::clicked, m_opener, &TraceOpener::cancel);
    connect(m_compare, &CompareRunner::statusText, m_status, &QLabel::setText);
    connect(m_compare, &CompareRunner::message, this, &MainWindow::showMessage);
    connect(m_compare, &CompareRunner::shown, this, [this] {
        m_exportComparison->setEnabled(true);
        emit comparisonShown();
    });
    statusBar()->addWidget(m_status, 1);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);
    buildDocks();
    m_layout.restore(); // before the menus, whose lane toggles show the restored options
    buildMenus();
    connect(
        m_workspace, &Workspace::statusMessage, this, [this](const QString& t) { statusBar()->showMessage(t, 8000); });
    connect(m_workspace->timeline(), &TimelineWidget::framePainted, this, [this](qint64) {
        if (m_waitingFirstPaint && m_workspace->document()) {
            m_waitingFirstPaint = false;
            m_firstPaintMs = m_openTimer.elapsed();
            emit firstPaint(m_firstPaintMs);
        }
    });
    connect(m_opener, &TraceOpener::started, this, [this](const QStringList& paths) {
        m_progress->setValue(0);
        m_progress->show();
        m_cancel->show();
        m_status->setText(tr("Opening %1…").arg(paths.isEmpty() ? QString() : QFileInfo(paths.first()).fileName()));
    });
    connect(m_opener, &TraceOpener::progress, this, [this](double f) { m_progress->setValue(int(f * 1000)); });
    connect(m_opener, &TraceOpener::loaded, this, &MainWindow::onLoaded);
    connect(m_opener, &TraceOpener::failed, this, &MainWindow::onFailed);
    connect(m_opener, &TraceOpener::canceled, this, [this] {
        m_progress->hide();
        m_cancel->hide();
        m_status->setText(tr("Loading canceled"));
    });
}

MainWindow::~MainWindow()
{
    TraceOpener::releaseLater(std::move(m_doc));
    // The workspace first: the docks hold its panels, and it must not outlive them.
    delete m_workspace;
}

void MainWindow::buildDocks()
{
    auto dock = [this](const QString& title, const QString& name, QWidget* w, Qt::DockWidgetArea area) {
        auto* d = new QDockWidget(title, this);
        d->setObjectName(name);
        d->setWidget(w);
        addDockWidget(area, d);
        return d;
    };
    auto* budgetScroll = new QScrollArea;
    budgetScroll->setWidgetResizable(true);
    budgetScroll->setWidget(m_workspace->budgetPanel());
    QDockWidget* details
        = dock(tr("Details"), QStringLiteral("details"), m_workspace->detailsPane(), Qt::RightDockWidgetArea);
    QDockWidget* budget = dock(tr("Budget"), QStringLiteral("budget"), budgetScroll, Qt::RightDockWidgetArea);
    QDockWidget* notes = dock(
        tr("Annotations"), QStringLiteral("annotations"), m_workspace->annotationPanel(), Qt::RightDockWidgetArea);
    tabifyDockWidget(details, budget);
    QDockWidget* query = dock(tr("Query"), QStringLiteral("query"), m_workspace->queryPanel(), Qt::RightDockWidgetArea);
    tabifyDockWidget(budget, notes);
    tabifyDockWidget(notes, query);
    details->raise();
}

void MainWindow::buildMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open…"), QKeySequence::Open, this, &MainWindow::openDialog);
    m_recent = new RecentFiles(file->addMenu(tr("Open &Recent")), this);
    connect(m_recent, &RecentFiles::openRequested, this, [this](const QString& p) { openFiles({ p }); });
    file->addAction(tr("Open the &sample trace"), this, [this] {
        if (!samplePath().isEmpty())
            openFiles({ samplePath() });
    });
    file->addSeparator();
    file->addAction(tr("&Save annotations"), QKeySequence::Save, this, [this] {
        QString where;
        const QString err = m_workspace->saveAnnotations(&where);
        statusBar()->showMessage(err.isEmpty() ? tr("Annotations saved to %1").arg(where) : err, 8000);
    });
    QMenu* exports = file->addMenu(tr("&Export"));
    exports->addAction(tr("&Image…"), QKeySequence(Qt::CTRL | Qt::Key_E), this, &MainWindow::exportDialog);
    exports->addAction(tr("&Perfetto trace…"), this, &MainWindow::exportPerfettoDialog);
    exports->addAction(tr("&HTML report…"), this, [this] { showMessage(FileDialogs::exportHtml(this, m_workspace)); });
    m_exportComparison = exports->addAction(tr("&Comparison image…"), this, &MainWindow::exportComparisonDialog);
    m_exportComparison->setEnabled(false);
    file->addAction(tr("Compare &with…"), this, &MainWindow::compareDialog);
#ifdef GAPSCOPE_HAVE_LIVE
    file->addAction(tr("Save trace &as .gapscope…"), QKeySequence::SaveAs, this, &MainWindow::saveTraceDialog);
    file->addAction(tr("&Connect to agent…"), this, &MainWindow::connectToAgent);
#endif
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    menuBar()->addMenu(new ViewMenu(m_workspace, &m_layout, this));

    m_steps = new StepsMenu(this);
    menuBar()->addMenu(m_steps);
    connect(m_steps, &StepsMenu::ruleChosen, this, [this](const QString& rule) {
        if (!m_doc)
            return;
        m_workspace->chooseStepRule(rule); // saved with the annotations: the file opens with it again
        loadFiles(m_doc->paths, rule); // the edited annotations go along, still to be saved
    });

    QMenu* live = menuBar()->addMenu(tr("&Live"));
    m_connectAction = live->addAction(tr("&Connect to agent…"), this, &MainWindow::connectToAgent);
#ifdef GAPSCOPE_HAVE_LIVE
    live->addAction(tr("&Follow the newest step"), QKeySequence(Qt::Key_End), this, [this] {
        if (m_live)
            m_live->setFollow(true);
    });
    live->addAction(tr("&Stop the capture"), this, [this] {
        if (m_live)
            m_live->stop();
    });
    live->addAction(tr("Capture &again"), this, [this] {
        if (m_live)
            m_live->restart();
    });
#endif

    menuBar()->addMenu(new HelpMenu(m_workspace, this));
}

#ifdef GAPSCOPE_HAVE_LIVE
void MainWindow::ensureLiveSession()
{
    if (m_live)
        return;
    m_live = new LiveSession(this);
    m_livePanel = new LivePanel;
    m_livePanel->setSession(m_live);
    m_liveDock = new QDockWidget(tr("Live"), this);
    m_liveDock->setObjectName(QStringLiteral("live"));
    m_liveDock->setWidget(m_livePanel);
    addDockWidget(Qt::BottomDockWidgetArea, m_liveDock);
    connect(m_livePanel, &LivePanel::openRequested, this, [this](const QString& p) { openFiles({ p }); });
    connect(m_livePanel, &LivePanel::message, this, [this](const QString& t) { statusBar()->showMessage(t, 8000); });
    connect(m_live, &LiveSession::statusChanged, this, [this] {
        const LiveStatus& st = m_live->status();
        if (m_workspace->document() != m_live->document().get())
            return;
        // Pieces joined, not chained arg(): the message may hold a '%'.
        QString text = tr("Live: ") + st.message + tr(" · step %1").arg(st.stepsDone);
        if (st.stepsTotal)
            text += QStringLiteral("/%1").arg(st.stepsTotal);
        text += tr(" · %1 events").arg(st.eventsReceived);
        if (st.droppedEvents || st.cut)
            text += tr(" · losses: %1 dropped").arg(st.droppedEvents) + (st.cut ? tr(", stream cut") : QString());
        m_status->setText(text);
    });
}

void MainWindow::connectToAgent()
{
    ConnectDialog dialog(this);
    if (m_live && !m_live->options().agents.empty())
        dialog.setOptions(m_live->options());
    dialog.listRanks();
    if (dialog.exec() != QDialog::Accepted || !confirmUnsavedAnnotations())
        return;
    ensureLiveSession();
    m_opener->cancel();
    m_live->attach(m_workspace);
    m_live->start(dialog.options());
    m_liveDock->show();
    m_liveDock->raise();
    setWindowTitle(tr("live capture — gapscope"));
}

void MainWindow::saveTraceDialog()
{
    const TraceDocument* doc = m_workspace->document();
    if (!doc)
        return;
    const QString path = QFileDialog::getSaveFileName(this, tr("Save trace"),
        QFileInfo(doc->displayName()).completeBaseName() + QStringLiteral(".gapscope"),
        tr("gapscope traces (*.gapscope)"));
    if (path.isEmpty())
        return;
    QString err;
    if (m_live && m_live->document().get() == doc) {
        err = m_live->saveAs(path);
    } else if (auto s = TraceDocument::save(*doc->trace, path); !s) {
        err = QString::fromStdString(s.message());
    }
    if (!err.isEmpty())
        QMessageBox::warning(this, tr("Could not save the trace"), err);
    else
        statusBar()->showMessage(tr("Saved %1").arg(path), 8000);
}
#else
void MainWindow::ensureLiveSession() { }

void MainWindow::connectToAgent()
{
    QMessageBox::information(this, tr("Connect to agent"),
        tr("This build has no live connection client (capture/ was not built). Capture to a file with "
           "gapscope-agent and open it here."));
}

void MainWindow::saveTraceDialog() { }
#endif

QString MainWindow::samplePath()
{
    QStringList dirs;
    if (qEnvironmentVariableIsSet("GAPSCOPE_RESOURCES"))
        dirs << qEnvironmentVariable("GAPSCOPE_RESOURCES") + QStringLiteral("/samples");
    dirs << QStringLiteral(GAPSCOPE_RESOURCE_DIR "/samples")
         << QCoreApplication::applicationDirPath() + QStringLiteral("/../share/gapscope/resources/samples");
    for (const QString& d : dirs) {
        const QStringList files = QDir(d).entryList({ QStringLiteral("*.gapscope") }, QDir::Files, QDir::Name);
        if (!files.isEmpty())
            return QDir(d).absoluteFilePath(files.first());
    }
    return {};
}

void MainWindow::openDialog()
{
    openFiles(FileDialogs::askTraces(this, tr("Open trace")));
}

void MainWindow::openFiles(const QStringList& paths, const QString& stepRule)
{
    if (paths.isEmpty() || !confirmUnsavedAnnotations())
        return;
    loadFiles(paths, stepRule);
}

void MainWindow::loadFiles(const QStringList& paths, const QString& rule)
{
    m_openTimer.start();
    m_firstPaintMs = -1;
    m_waitingFirstPaint = false;
    auto [open, prepare] = TraceDocument::loader(paths, rule);
    m_opener->load(paths, std::move(open), std::move(prepare));
}

void MainWindow::onLoaded(const std::shared_ptr<LoadedTrace>& loaded)
{
    m_progress->hide();
    m_cancel->hide();
    auto doc = std::make_shared<const TraceDocument>(TraceDocument::fromLoaded(*loaded));
    m_waitingFirstPaint = true;
    m_workspace->setDocument(doc);
    TraceOpener::releaseLater(std::move(m_doc)); // the previous trace is freed off the GUI thread
    m_doc = doc;
    m_steps->setDocument(doc);
    for (const QString& p : doc->paths)
        m_recent->add(p);
    setWindowTitle(QStringLiteral("%1 — gapscope").arg(doc->displayName()));
    const auto& t = *doc->trace;
    QString text = tr("%1: %2 events, %3 ranks, %4 steps · opened in %5 s")
                       .arg(doc->displayName())
                       .arg(qulonglong(t.eventCount()))
                       .arg(t.ranks().size())
                       .arg(t.stepCount())
                       .arg(doc->openSeconds + doc->prepareSeconds, 0, 'f', 2);
    if (!t.warnings().empty())
        text += tr(" · %n warning(s) (see the tooltip)", nullptr, int(t.warnings().size()));
    QStringList warnings;
    for (const auto& w : t.warnings())
        warnings << QString::fromStdString(w);
    m_status->setText(text);
    m_status->setToolTip(warnings.join(QLatin1Char('\n')));
    emit documentShown();
}

QMessageBox* MainWindow::errorDialog() const
{
    return m_error.data();
}

void MainWindow::onFailed(const QStringList& paths, const QString& message)
{
    m_progress->hide();
    m_cancel->hide();
    const QString files = paths.join(QStringLiteral(", "));
    m_status->setText(tr("Could not open %1").arg(files));
    // Non-modal, so a batch of failures does not stack modal loops; the reader's message names the
    // file and, for a parse error, the byte offset; the file is named here in any case.
    if (m_error)
        m_error->close();
    m_error = new QMessageBox(QMessageBox::Warning, tr("Could not open the trace"), tr("Could not open %1").arg(files),
        QMessageBox::Ok, this);
    m_error->setAttribute(Qt::WA_DeleteOnClose);
    bool named = false;
    for (const QString& p : paths)
        named = named || message.contains(QFileInfo(p).fileName());
    m_error->setInformativeText(named ? message : files + QStringLiteral(": ") + message);
    m_error->open();
}

bool MainWindow::confirmUnsavedAnnotations()
{
    if (!m_workspace->annotations()->isModified())
        return true;
    const auto answer = QMessageBox::question(this, tr("Unsaved annotations"),
        tr("The annotations of this trace have changed. Save them first?"),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
    if (answer == QMessageBox::Cancel)
        return false;
    if (answer == QMessageBox::Save) {
        const QString err = m_workspace->saveAnnotations();
        if (!err.isEmpty()) {
            QMessageBox::warning(this, tr("Could not save the annotations"), err);
            return false;
        }
    }
    m_workspace->annotations()->setModified(false);
    return true;
}

void MainWindow::exportDialog()
{
    showMessage(FileDialogs::exportImage(this, m_workspace));
}

void MainWindow::exportPerfettoDialog()
{
    showMessage(FileDialogs::exportPerfetto(this, m_workspace));
}

void MainWindow::compareDialog()
{
    if (m_doc)
        compareWith(FileDialogs::askTraces(this, tr("Compare with trace")));
}

void MainWindow::compareWith(const QStringList& paths)
{
    m_compare->compareWith(m_doc, paths, m_workspace->analysis()->analyzer());
}

void MainWindow::exportComparisonDialog()
{
    m_compare->exportImageDialog();
}

void MainWindow::resetLayout()
{
    m_layout.reset();
}

void MainWindow::showAsRemembered()
{
    m_layout.show();
}

void MainWindow::showMessage(const QString& text)
{
    if (!text.isEmpty())
        statusBar()->showMessage(text, 8000);
}

void MainWindow::closeEvent(QCloseEvent* e)
{
    if (!confirmUnsavedAnnotations()) {
        e->ignore();
        return;
    }
    m_opener->cancel();
    m_layout.save();
    e->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e)
{
    if (e->mimeData()->hasUrls())
        e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e)
{
    QStringList files;
    for (const QUrl& u : e->mimeData()->urls()) {
        if (u.isLocalFile())
            files << u.toLocalFile();
    }
    if (!files.isEmpty()) {
        e->acceptProposedAction();
        openFiles(files);
    }
}
