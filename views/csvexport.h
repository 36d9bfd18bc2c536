// SPDX-License-Identifier: MIT
#pragma once

// CSV text of an item model (or of selected rows of it), for "Copy as CSV" and "Save as CSV".
// RFC 4180 quoting; headers from headerData(); cells from `role` (Qt::UserRole gives raw numbers,
// falling back to the display text where a column has no raw value). GUI thread.

#include <QModelIndexList>
#include <QString>

class QAbstractItemModel;

namespace csvexport {

QString quote(const QString& cell);
// Rows: all rows when `rows` is empty, else those rows (in the given order).
QString toCsv(const QAbstractItemModel& model, const QList<int>& rows = {}, int role = Qt::UserRole);

} // namespace csvexport
