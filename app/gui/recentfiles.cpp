// SPDX-License-Identifier: MIT
#include "app/gui/recentfiles.h"

#include <QAction>
#include <QDir>
#include <QFileInfo>
#include <QMenu>
#include <QSettings>

namespace {
const char* const kKey = "recentFiles";
}

RecentFiles::RecentFiles(QMenu* menu, QObject* parent)
    : QObject(parent)
    , m_menu(menu)
{
    rebuild();
}

QStringList RecentFiles::files() const
{
    return QSettings().value(QLatin1String(kKey)).toStringList();
}

void RecentFiles::add(const QString& path)
{
    const QString abs = QFileInfo(path).absoluteFilePath();
    QStringList list = files();
    list.removeAll(abs);
    list.prepend(abs);
    while (list.size() > kMax)
        list.removeLast();
    QSettings().setValue(QLatin1String(kKey), list);
    rebuild();
}

void RecentFiles::clear()
{
    QSettings().remove(QLatin1String(kKey));
    rebuild();
}

void RecentFiles::rebuild()
{
    m_menu->clear();
    QStringList list = files();
    list.erase(
        std::remove_if(list.begin(), list.end(), [](const QString& f) { return !QFileInfo::exists(f); }), list.end());
    for (int i = 0; i < list.size(); ++i) {
        const QString path = list[i];
        QAction* a = m_menu->addAction(QStringLiteral("&%1 %2").arg((i + 1) % 10).arg(QDir::toNativeSeparators(path)));
        connect(a, &QAction::triggered, this, [this, path] { emit openRequested(path); });
    }
    if (!list.isEmpty()) {
        m_menu->addSeparator();
        m_menu->addAction(tr("Clear the list"), this, &RecentFiles::clear);
    }
    m_menu->setEnabled(!list.isEmpty());
}
