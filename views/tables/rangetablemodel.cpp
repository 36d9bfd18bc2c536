// SPDX-License-Identifier: MIT
#include "views/tables/rangetablemodel.h"

#include "views/common/timeformat.h"

using namespace gapscope::model;

RangeTableModel::RangeTableModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void RangeTableModel::setTable(RangeTable table)
{
    beginResetModel();
    m_table = std::move(table);
    m_ownAll = 0;
    for (const RangeRow& r : m_table.rows)
        m_ownAll += r.ownTotal;
    endResetModel();
}

int RangeTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_table.rows.size());
}

int RangeTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RangeTableModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount())
        return {};
    const RangeRow& r = m_table.rows[size_t(index.row())];
    const double perStep = m_table.steps ? double(r.count) / double(m_table.steps) : double(r.count);
    const double share = m_ownAll ? double(r.ownTotal) / double(m_ownAll) : 0.0;
    if (role == Qt::UserRole) {
        switch (index.column()) {
        case Range:
            return QString::fromStdString(r.path);
        case Source:
            return QString::fromLatin1(toString(r.source));
        case Count:
            return qulonglong(r.count);
        case PerStep:
            return perStep;
        case OwnTime:
            return qlonglong(r.ownTotal);
        case Share:
            return share;
        default:
            return {};
        }
    }
    if (role == Qt::TextAlignmentRole)
        return index.column() >= Count ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    switch (index.column()) {
    case Range:
        return QString::fromStdString(r.path);
    case Source:
        return QString::fromLatin1(toString(r.source));
    case Count:
        return QString::number(r.count);
    case PerStep:
        return QString::number(perStep, 'f', 2);
    case OwnTime:
        return timeformat::duration(double(r.ownTotal));
    case Share:
        return QStringLiteral("%1 %").arg(100.0 * share, 0, 'f', 1);
    default:
        return {};
    }
}

QVariant RangeTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Range:
        return tr("Range");
    case Source:
        return tr("Source");
    case Count:
        return tr("Kernels");
    case PerStep:
        return m_table.steps ? tr("Per step") : tr("Per trace");
    case OwnTime:
        return tr("Own time");
    case Share:
        return tr("Share");
    default:
        return {};
    }
}
