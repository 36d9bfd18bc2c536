// SPDX-License-Identifier: MIT
#include "app/gui/windowlayout.h"

#include "views/document/workspace.h"
#include "views/timeline/lanelayout.h"
#include "views/timeline/timelinewidget.h"

#include <QMainWindow>
#include <QSettings>
#include <QSplitter>

#include <algorithm>

WindowLayout::WindowLayout(QMainWindow* window, Workspace* workspace)
    : m_window(window)
    , m_workspace(workspace)
{
}

void WindowLayout::restore()
{
    m_defaultState = m_window->saveState();
    QSettings s;
    m_window->restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray());
    m_window->restoreState(s.value(QStringLiteral("window/state")).toByteArray());
    m_workspace->splitter()->restoreState(s.value(QStringLiteral("window/splitter")).toByteArray());
    LaneLayoutOptions o = m_workspace->timeline()->layoutOptions();
    o.showCpuApi = s.value(QStringLiteral("lanes/cpuApi"), o.showCpuApi).toBool();
    o.showNvtx = s.value(QStringLiteral("lanes/nvtx"), o.showNvtx).toBool();
    o.showCollectives = s.value(QStringLiteral("lanes/collectives"), o.showCollectives).toBool();
    o.showReplayRanges = s.value(QStringLiteral("lanes/replay_ranges"), o.showReplayRanges).toBool();
    m_workspace->timeline()->setLayoutOptions(o);
    if (!s.contains(QStringLiteral("window/geometry")))
        m_window->resize(1500, 900); // the size a later un-maximise returns to
}

void WindowLayout::save() const
{
    QSettings s;
    s.setValue(QStringLiteral("window/geometry"), m_window->saveGeometry());
    s.setValue(QStringLiteral("window/state"), m_window->saveState());
    s.setValue(QStringLiteral("window/splitter"), m_workspace->splitter()->saveState());
    const LaneLayoutOptions& o = m_workspace->timeline()->layoutOptions();
    s.setValue(QStringLiteral("lanes/cpuApi"), o.showCpuApi);
    s.setValue(QStringLiteral("lanes/nvtx"), o.showNvtx);
    s.setValue(QStringLiteral("lanes/collectives"), o.showCollectives);
    s.setValue(QStringLiteral("lanes/replay_ranges"), o.showReplayRanges);
}

void WindowLayout::reset()
{
    m_window->restoreState(m_defaultState);
    // The timeline and waterfall get three quarters of the height, the tables the rest (as at first).
    QSplitter* split = m_workspace->splitter();
    const int h = std::max(4, split->height());
    split->setSizes({ h * 3 / 4, h - h * 3 / 4 });
}

void WindowLayout::show()
{
    // restoreGeometry() has brought back a maximised or full-screen state with the rest.
    if (QSettings().contains(QStringLiteral("window/geometry")))
        m_window->show();
    else
        m_window->showMaximized();
}
