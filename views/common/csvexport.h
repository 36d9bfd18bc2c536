// SPDX-License-Identifier: MIT
#pragma once

// CSV text of an item model (or of selected rows of it), for "Copy as CSV" and "Save as CSV".
// RFC 4180 quoting; headers from headerData(); cells from `role` (Qt::UserRole gives raw numbers,
// falling back to the display text where a column has no raw value). Every column of the model is
// written, hidden ones too (a kernel's full name). addCsvActions gives any table view the same
// context menu (copy selected / all rows, save as CSV…) and Ctrl+C. GUI thread.

#include <QModelIndexList>
#include <QString>

class QAbstractItemModel;
class QTableView;
class QWidget;

namespace csvexport {

QString quote(const QString& cell);
// Rows: all rows when `rows` is empty, else those rows (in the given order).
QString toCsv(const QAbstractItemModel& model, const QList<int>& rows = {}, int role = Qt::UserRole);
// The rows of the view's model in view order: the selected rows, or all when none is selected (or
// selectedOnly is false).
QString viewCsv(const QTableView& view, bool selectedOnly);
// Writes `csv` to `path`; false (and `error` set) when the file cannot be written.
bool saveCsv(const QString& path, const QString& csv, QString* error);
// Context menu "Copy selected rows as CSV" / "Copy all rows as CSV" / "Save as CSV…" and Ctrl+C
// (selected rows) on `view`; `owner` is where the shortcut lives (the view or its container).
void addCsvActions(QTableView* view, QWidget* owner);

} // namespace csvexport
