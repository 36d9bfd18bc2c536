// SPDX-License-Identifier: MIT
#pragma once

// WindowLayout: the window's layout across runs. restore() keeps the dock layout as built (what
// View > Reset layout returns to, reset()) and brings back the one saved in QSettings: geometry
// ("window/geometry"), docks ("window/state"), the timeline/tables split ("window/splitter") and the
// lane options ("lanes/cpuApi", "lanes/nvtx", "lanes/collectives"); save() writes them, when the
// window closes. show() maximises the window on the first start (nothing saved), else shows it as it
// was. The step rule chosen for a trace is not kept here: it travels with the trace's annotations.
//
// Threading: GUI thread.

#include <QByteArray>

class QMainWindow;
class Workspace;

class WindowLayout {
public:
    WindowLayout(QMainWindow* window, Workspace* workspace);

    void restore(); // once, after the docks are built and before the menus show the lane options
    void save() const;
    void reset(); // docks as first built, the timeline and waterfall three quarters of the height
    void show();

private:
    QMainWindow* m_window;
    Workspace* m_workspace;
    QByteArray m_defaultState; // the dock layout before any saved one was restored
};
