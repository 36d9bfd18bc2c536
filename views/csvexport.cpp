// SPDX-License-Identifier: MIT
#include "views/csvexport.h"

#include <QAbstractItemModel>

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

} // namespace csvexport
