// SPDX-License-Identifier: MIT
#include "views/common/csvexport.h"

#include <QAbstractItemModel>
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QFile>
#include <QFileDialog>
#include <QItemSelectionModel>
#include <QMenu>
#include <QMessageBox>
#include <QTableView>

#include <algorithm>

namespace csvexport {

QString quote(const QString& cell)
{
    if (!cell.contains(QLatin1Char(',')) && !cell.contains(QLatin1Char('"')) && !cell.contains(QLatin1Char('\n')))
        return cell;
    QString q = cell;
    q.replace(QLatin1String("\""), QLatin1String("\"\""));
    return QLatin1Char('"') + q + QLatin1Char('"');
}

static QString cellText(const QAbstractItemModel& model, int row, int column, int role)
{
    const QModelIndex idx = model.index(row, column);
    QVariant v = model.data(idx, role);
    if (!v.isValid())
        v = model.data(idx, Qt::DisplayRole);
    if (v.typeId() == QMetaType::Double)
        return QString::number(v.toDouble(), 'g', 12);
    return v.toString();
}

QString toCsv(const QAbstractItemModel& model, const QList<int>& rows, int role)
{
    QString out;
    const int columns = model.columnCount();
    for (int c = 0; c < columns; ++c) {
        if (c)
            out += QLatin1Char(',');
        out += quote(model.headerData(c, Qt::Horizontal).toString());
    }
    out += QLatin1Char('\n');
    const int n = rows.isEmpty() ? model.rowCount() : int(rows.size());
    for (int k = 0; k < n; ++k) {
        const int row = rows.isEmpty() ? k : rows[k];
        for (int c = 0; c < columns; ++c) {
            if (c)
                out += QLatin1Char(',');
            out += quote(cellText(model, row, c, role));
        }
        out += QLatin1Char('\n');
    }
    return out;
}

QString viewCsv(const QTableView& view, bool selectedOnly)
{
    QList<int> rows;
    if (selectedOnly && view.selectionModel()) {
        for (const QModelIndex& idx : view.selectionModel()->selectedRows())
            rows << idx.row();
        std::sort(rows.begin(), rows.end());
    }
    return view.model() ? toCsv(*view.model(), rows) : QString();
}

bool saveCsv(const QString& path, const QString& csv, QString* error)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(csv.toUtf8()) < 0) {
        if (error)
            *error = f.errorString();
        return false;
    }
    return true;
}

void addCsvActions(QTableView* view, QWidget* owner)
{
    view->setContextMenuPolicy(Qt::CustomContextMenu);
    QObject::connect(view, &QTableView::customContextMenuRequested, view, [view](const QPoint& pos) {
        QMenu menu(view);
        menu.addAction(QObject::tr("Copy selected rows as CSV"), view,
            [view] { QApplication::clipboard()->setText(viewCsv(*view, true)); });
        menu.addAction(QObject::tr("Copy all rows as CSV"), view,
            [view] { QApplication::clipboard()->setText(viewCsv(*view, false)); });
        menu.addAction(QObject::tr("Save as CSV…"), view, [view] {
            const QString path = QFileDialog::getSaveFileName(
                view, QObject::tr("Save as CSV"), QString(), QObject::tr("CSV (*.csv);;All files (*)"));
            QString error;
            if (!path.isEmpty() && !saveCsv(path, viewCsv(*view, false), &error))
                QMessageBox::warning(
                    view, QObject::tr("Save as CSV"), QObject::tr("Could not write %1: %2").arg(path, error));
        });
        menu.exec(view->viewport()->mapToGlobal(pos));
    });
    auto* copy = new QAction(owner);
    copy->setShortcut(QKeySequence::Copy);
    copy->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    QObject::connect(
        copy, &QAction::triggered, view, [view] { QApplication::clipboard()->setText(viewCsv(*view, true)); });
    owner->addAction(copy);
}

} // namespace csvexport
