// SPDX-License-Identifier: MIT
#include "views/tables/kerneltablemodel.h"

#include "views/common/eventcolors.h"
#include "views/common/statstable.h"
#include "views/common/timeformat.h"

#include <QColor>
#include <QLocale>

KernelTableModel::KernelTableModel(Mode mode, QObject* parent)
    : QAbstractTableModel(parent)
    , m_mode(mode)
{
}

void KernelTableModel::setStats(const KernelStatsResult& stats)
{
    beginResetModel();
    m_rows = m_mode == Mode::Names ? stats.names : stats.components;
    endResetModel();
}

void KernelTableModel::setBandwidthCeiling(double gbs)
{
    m_ceiling = gbs;
    if (!m_rows.empty())
        emit dataChanged(index(0, Bandwidth), index(rowCount() - 1, Bandwidth));
}

const NameStats* KernelTableModel::row(int r) const
{
    return r >= 0 && r < int(m_rows.size()) ? &m_rows[size_t(r)] : nullptr;
}

int KernelTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int KernelTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant KernelTableModel::rawData(const NameStats& s, int column) const
{
    switch (column) {
    case Name:
        return m_mode == Mode::Names && !s.shortName.isEmpty() ? s.shortName : s.name;
    case FullName:
        return s.name;
    case Component:
        return s.component;
    case Count:
        return qulonglong(s.count);
    case Total:
        return s.totalNs;
    case OwnTotal:
        return s.ownTotalNs;
    case Mean:
        return s.meanNs;
    case P50:
        return s.p50Ns;
    case P99:
        return s.p99Ns;
    case Max:
        return s.maxNs;
    case PercentOfStep:
        return s.percentOfStep;
    case Bytes:
        return qulonglong(s.bytes);
    case Bandwidth:
        return s.gbPerSecond();
    }
    return {};
}

QVariant KernelTableModel::displayData(const NameStats& s, int column) const
{
    switch (column) {
    case Count:
        return QLocale::c().toString(qulonglong(s.count));
    case Total:
    case OwnTotal:
    case Mean:
    case P50:
    case P99:
    case Max:
        return timeformat::duration(rawData(s, column).toDouble());
    case PercentOfStep:
        return QStringLiteral("%1%").arg(s.percentOfStep, 0, 'f', 2);
    case Bytes:
        return s.bytes ? QStringLiteral("%1 MB").arg(double(s.bytes) / 1e6, 0, 'f', 2) : QString();
    case Bandwidth:
        if (!s.bytes)
            return QString();
        if (m_ceiling > 0)
            return QStringLiteral("%1 GB/s (%2% of %3)")
                .arg(s.gbPerSecond(), 0, 'f', 1)
                .arg(100 * s.gbPerSecond() / m_ceiling, 0, 'f', 0)
                .arg(m_ceiling, 0, 'f', 0);
        return QStringLiteral("%1 GB/s").arg(s.gbPerSecond(), 0, 'f', 1);
    default:
        return rawData(s, column);
    }
}

QVariant KernelTableModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount)
        return {};
    const NameStats& s = m_rows[size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        return displayData(s, index.column());
    case Qt::UserRole:
        return rawData(s, index.column());
    case Qt::ToolTipRole:
        return index.column() == Name ? s.name : QVariant();
    case StatsTable::FilterRole:
        return index.column() == Name ? QString(rawData(s, Name).toString() + QLatin1Char('\n') + s.name)
                                      : rawData(s, index.column());
    case Qt::TextAlignmentRole:
        return index.column() >= Count ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    case Qt::DecorationRole:
        if (index.column() == (m_mode == Mode::Names ? int(Component) : int(Name)))
            return EventColors::componentColor(s.component.isEmpty()
                    ? QString::fromLatin1(gapscope::model::barInfo(gapscope::model::BarId::UnclassifiedKernels).name)
                    : s.component);
        return {};
    default:
        return {};
    }
}

QVariant KernelTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && section == OwnTotal)
        return tr("Total without the time a kernel waits for earlier work of its stream (one launched early by "
                  "programmatic dependent launch starts before the previous kernel ends)");
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    static const char* names[] = { "name", "component", "count", "total", "own total", "mean", "p50", "p99", "max",
        "% of step", "bytes", "achieved bandwidth", "full name" };
    if (section < 0 || section >= ColumnCount)
        return {};
    if (section == Name && m_mode == Mode::Components)
        return tr("component");
    return tr(names[section]);
}
