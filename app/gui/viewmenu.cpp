// SPDX-License-Identifier: MIT
#include "app/gui/viewmenu.h"

#include "app/gui/windowlayout.h"
#include "views/document/tracedocument.h"
#include "views/document/workspace.h"
#include "views/timeline/searchbar.h"
#include "views/timeline/timelinewidget.h"

#include <QDockWidget>
#include <QInputDialog>
#include <QMainWindow>

ViewMenu::ViewMenu(Workspace* workspace, WindowLayout* layout, QMainWindow* window)
    : QMenu(tr("&View"), window)
    , m_workspace(workspace)
{
    addAction(tr("&Find…"), QKeySequence::Find, workspace->searchBar(), &SearchBar::activate);
    addAction(tr("Find &next"), QKeySequence::FindNext, workspace->searchBar(), &SearchBar::next);
    addAction(tr("Find &previous"), QKeySequence::FindPrevious, workspace->searchBar(), &SearchBar::previous);
    addAction(tr("&Zoom to whole trace"), QKeySequence(Qt::Key_0), workspace->timeline(), &TimelineWidget::zoomToAll);
    addAction(tr("&Go to step…"), QKeySequence(Qt::CTRL | Qt::Key_G), this, &ViewMenu::goToStep);
    addSeparator();
    addLaneToggle(tr("Show &CPU API lanes"), &LaneLayoutOptions::showCpuApi);
    addLaneToggle(tr("Show &NVTX lanes"), &LaneLayoutOptions::showNvtx);
    addLaneToggle(tr("Show c&ollective lanes"), &LaneLayoutOptions::showCollectives);
    addLaneToggle(tr("Show graph replays by &range"), &LaneLayoutOptions::showReplayRanges);
    addSeparator();
    for (QDockWidget* d : window->findChildren<QDockWidget*>())
        addAction(d->toggleViewAction());
    addSeparator();
    addAction(tr("&Reset layout"), this, [layout] { layout->reset(); });
}

void ViewMenu::addLaneToggle(const QString& text, bool LaneLayoutOptions::*member)
{
    QAction* a = addAction(text);
    a->setCheckable(true);
    a->setChecked(m_workspace->timeline()->layoutOptions().*member);
    connect(a, &QAction::toggled, this, [this, member](bool on) {
        LaneLayoutOptions o = m_workspace->timeline()->layoutOptions();
        o.*member = on;
        m_workspace->timeline()->setLayoutOptions(o);
    });
}

void ViewMenu::goToStep()
{
    const TraceDocument* doc = m_workspace->document();
    if (!doc || !doc->trace)
        return;
    const uint32_t steps = doc->large() ? doc->overview->stepCount() : doc->trace->stepCount();
    if (steps == 0)
        return;
    bool ok = false;
    const int step = QInputDialog::getInt(
        parentWidget(), tr("Go to step"), tr("Decode step (0 to %1):").arg(steps - 1), 0, 0, int(steps - 1), 1, &ok);
    if (ok)
        m_workspace->showStep(uint32_t(step));
}
