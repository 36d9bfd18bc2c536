// SPDX-License-Identifier: MIT
#pragma once

// HelpMenu: the window's Help menu. "Mouse and keys" lists the timeline's mouse and keyboard controls
// (the table in views/README.md); "About gapscope" gives the version and the memory in use: the
// process (resident and peak) and the shown trace, for a large file its overview, the window of
// events read and the cache they may fill (TraceDocument::cacheBytes()). Both are dialogs on the
// menu's parent (the window). It reads the workspace's document only when asked.
//
// Threading: GUI thread.

#include <QMenu>

class Workspace;

class HelpMenu : public QMenu {
    Q_OBJECT
public:
    HelpMenu(Workspace* workspace, QWidget* parent);

    void showShortcuts();
    void showAbout();
    // What the process and the open trace hold (rich text, for the About box).
    QString memoryText() const;

private:
    Workspace* m_workspace;
};
