// SPDX-License-Identifier: MIT
#pragma once

// ViewMenu: the window's View menu: find (next, previous), zoom to the whole trace, go to a step (any
// step, of a large file too: the overview's steps), the lane toggles (CPU API, NVTX and collective
// lanes, the timeline's LaneLayoutOptions: build it after WindowLayout::restore() so they show the
// restored options), a show/hide toggle per dock present when it is built, and Reset layout.
//
// Threading: GUI thread.

#include "views/timeline/lanelayout.h"

#include <QMenu>

class QMainWindow;
class WindowLayout;
class Workspace;

class ViewMenu : public QMenu {
    Q_OBJECT
public:
    ViewMenu(Workspace* workspace, WindowLayout* layout, QMainWindow* window);

    void goToStep(); // asks for a step and shows it

private:
    void addLaneToggle(const QString& text, bool LaneLayoutOptions::*member);

    Workspace* m_workspace;
};
