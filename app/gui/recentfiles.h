// SPDX-License-Identifier: MIT
#pragma once

// RecentFiles: the most recently opened traces (QSettings key "recentFiles", newest first, at most
// kMax, missing files dropped when the menu is rebuilt) and the "Open Recent" menu built from them.
//
// Threading: GUI thread.

#include <QObject>
#include <QStringList>

class QMenu;

class RecentFiles : public QObject {
    Q_OBJECT
public:
    static constexpr int kMax = 10;
    explicit RecentFiles(QMenu* menu, QObject* parent = nullptr);

    void add(const QString& path);
    QStringList files() const;
    void clear();

signals:
    void openRequested(const QString& path);

private:
    void rebuild();
    QMenu* m_menu;
};
