// SPDX-License-Identifier: MIT
#include "views/compare/kerneldiffmodel.h"
#include "model/trace/kernelname.h"
#include "views/common/timeformat.h"

#include <QBrush>
#include <QColor>

#include <cmath>
#include <limits>

using gapscope::model::TraceDiff;

namespace {

QString fullNames(const TraceDiff::KernelDelta& k)
{
    if (k.match != TraceDiff::Match::Normalised)
        return QString::fromStdString(k.name);
    QStringList parts;
    for (const auto& n : k.aNames)
        parts << QStringLiteral("A: ") + QString::fromStdString(n);
    for (const auto& n : k.bNames)
        parts << QStringLiteral("B: ") + QString::fromStdString(n);
    return parts.join(QLatin1Char('\n'));
}

QString signedDuration(double ns)
{
    if (ns == 0)
        return QStringLiteral("0");
    return (ns > 0 ? QStringLiteral("+") : QStringLiteral("−")) + timeformat::duration(std::fabs(ns));
}

} // namespace

KernelDiffModel::KernelDiffModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void KernelDiffModel::setKernels(const std::vector<TraceDiff::KernelDelta>& kernels)
{
    beginResetModel();
    m_rows = kernels;
    m_short.clear();
    for (const auto& k : m_rows)
        m_short.push_back(QString::fromStdString(gapscope::model::shortKernelName(k.name)));
    endResetModel();
}

int KernelDiffModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int KernelDiffModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant KernelDiffModel::raw(const TraceDiff::KernelDelta& k, int column) const
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const bool inA = k.match != TraceDiff::Match::New, inB = k.match != TraceDiff::Match::Vanished;
    switch (column) {
    case Match:
        return QString::fromLatin1(toString(k.match));
    case CountA:
        return qulonglong(k.aCount);
    case CountB:
        return qulonglong(k.bCount);
    case TotalA:
        return double(k.aTotal);
    case TotalB:
        return double(k.bTotal);
    case DeltaTotal:
        return double(k.deltaTotal());
    case OwnA:
        return double(k.aOwn);
    case OwnB:
        return double(k.bOwn);
    case DeltaOwn:
        return double(k.bOwn - k.aOwn);
    case MedianA:
        return inA && k.mediansKnown ? double(k.aMedian) : nan;
    case MedianB:
        return inB && k.mediansKnown ? double(k.bMedian) : nan;
    case FullName:
        return fullNames(k);
    }
    return {};
}

QVariant KernelDiffModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount())
        return {};
    const auto& k = m_rows[size_t(index.row())];
    const int c = index.column();
    if (role == Qt::UserRole)
        return c == Name ? QVariant(m_short[size_t(index.row())]) : raw(k, c);
    if (role == Qt::ToolTipRole && (c == Name || c == FullName))
        return fullNames(k);
    if (role == Qt::TextAlignmentRole && c >= CountA && c <= MedianB)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ForegroundRole && (c == DeltaTotal || c == DeltaOwn)) {
        const double d = raw(k, c).toDouble();
        if (d != 0)
            return QBrush(d > 0 ? QColor(190, 40, 40) : QColor(30, 130, 60));
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (c) {
    case Name:
        return m_short[size_t(index.row())];
    case Match:
    case FullName:
    case CountA:
    case CountB:
        return raw(k, c);
    case DeltaTotal:
    case DeltaOwn:
        return signedDuration(raw(k, c).toDouble());
    default: {
        const double v = raw(k, c).toDouble();
        return std::isnan(v) ? QStringLiteral("–") : timeformat::duration(v);
    }
    }
}

QVariant KernelDiffModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    static const char* const kNames[] = { "name", "paired", "count A", "count B", "total A", "total B", "Δ total",
        "own A", "own B", "Δ own", "median A", "median B", "full name" };
    static_assert(sizeof kNames / sizeof kNames[0] == ColumnCount);
    return section >= 0 && section < ColumnCount ? QString::fromUtf8(kNames[section]) : QVariant();
}
