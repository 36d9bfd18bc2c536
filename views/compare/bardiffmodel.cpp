// SPDX-License-Identifier: MIT
#include "views/compare/bardiffmodel.h"

#include <QBrush>
#include <QColor>

#include <limits>

using gapscope::model::TraceDiff;

BarDiffModel::BarDiffModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void BarDiffModel::setWaterfall(const TraceDiff::Waterfall& waterfall)
{
    beginResetModel();
    m_waterfall = waterfall;
    endResetModel();
}

int BarDiffModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_waterfall.bars.size());
}

int BarDiffModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant BarDiffModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount())
        return {};
    const TraceDiff::BarDelta& bar = m_waterfall.bars[size_t(index.row())];
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double a = bar.inA ? bar.aNs / 1e6 : nan, b = bar.inB ? bar.bNs / 1e6 : nan, d = bar.deltaNs() / 1e6;
    if (role == Qt::UserRole) {
        switch (index.column()) {
        case Name:
            return QString::fromStdString(bar.name);
        case A:
            return a;
        case B:
            return b;
        case Delta:
            return d;
        }
        return {};
    }
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Name:
            return QString::fromStdString(bar.name);
        case A:
            return bar.inA ? QString::number(a, 'f', 3) : QStringLiteral("–");
        case B:
            return bar.inB ? QString::number(b, 'f', 3) : QStringLiteral("–");
        case Delta:
            return (d > 0.0005 ? QStringLiteral("+") : QString()) + QString::number(d, 'f', 3);
        }
    }
    if (role == Qt::TextAlignmentRole && index.column() != Name)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ForegroundRole && index.column() == Delta && std::abs(d) >= 0.0005)
        return QBrush(d > 0 ? QColor(190, 40, 40) : QColor(30, 130, 60)); // slower red, faster green
    return {};
}

QVariant BarDiffModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    static const char* const kNames[] = { "bar", "A (ms)", "B (ms)", "Δ (ms)" };
    return section >= 0 && section < ColumnCount ? QString::fromUtf8(kNames[section]) : QVariant();
}
