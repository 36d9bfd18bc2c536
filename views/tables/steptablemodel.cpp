// SPDX-License-Identifier: MIT
#include "views/tables/steptablemodel.h"

#include <QBrush>
#include <QColor>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace gapscope::model;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

StepTableModel::StepTableModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void StepTableModel::setTrace(const Trace* trace)
{
    beginResetModel();
    m_indices.clear();
    m_ranks.clear();
    m_ms.clear();
    m_windows.clear();
    m_median = 0;
    if (trace) {
        m_ranks = trace->ranks();
        for (uint32_t r : m_ranks) {
            for (const Step& s : trace->steps(r))
                m_indices.push_back(s.index);
        }
        std::sort(m_indices.begin(), m_indices.end());
        m_indices.erase(std::unique(m_indices.begin(), m_indices.end()), m_indices.end());
        m_ms.assign(m_indices.size() * m_ranks.size(), kNaN);
        m_windows.assign(m_indices.size(), { INT64_MAX, INT64_MIN });
        for (size_t k = 0; k < m_ranks.size(); ++k) {
            for (const Step& s : trace->steps(m_ranks[k])) {
                const size_t row
                    = size_t(std::lower_bound(m_indices.begin(), m_indices.end(), s.index) - m_indices.begin());
                m_ms[row * m_ranks.size() + k] = double(s.duration()) / 1e6;
                m_windows[row].first = std::min(m_windows[row].first, s.start);
                m_windows[row].second = std::max(m_windows[row].second, s.end);
            }
        }
        std::vector<double> slowest;
        for (int row = 0; row < rowCount(); ++row)
            slowest.push_back(slowestMs(row));
        if (!slowest.empty()) {
            std::nth_element(slowest.begin(), slowest.begin() + std::ptrdiff_t(slowest.size() / 2), slowest.end());
            m_median = slowest[slowest.size() / 2];
        }
    }
    endResetModel();
}

double StepTableModel::durationMs(int row, int rankColumn) const
{
    if (row < 0 || row >= rowCount() || rankColumn < 0 || rankColumn >= int(m_ranks.size()))
        return kNaN;
    return m_ms[size_t(row) * m_ranks.size() + size_t(rankColumn)];
}

double StepTableModel::slowestMs(int row) const
{
    double m = 0;
    for (int k = 0; k < int(m_ranks.size()); ++k) {
        const double v = durationMs(row, k);
        if (!std::isnan(v))
            m = std::max(m, v);
    }
    return m;
}

std::pair<TimeNs, TimeNs> StepTableModel::window(int row) const
{
    return row >= 0 && row < rowCount() ? m_windows[size_t(row)] : std::pair<TimeNs, TimeNs> { 0, 0 };
}

int StepTableModel::rowOfStep(uint32_t index) const
{
    auto it = std::lower_bound(m_indices.begin(), m_indices.end(), index);
    return it != m_indices.end() && *it == index ? int(it - m_indices.begin()) : -1;
}

int StepTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_indices.size());
}

int StepTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_ranks.size()) + 4;
}

int StepTableModel::fixedColumn(int column) const
{
    if (column == 0)
        return 0;
    const int k = column - 1 - int(m_ranks.size());
    return k >= 0 ? k + 1 : -1;
}

QVariant StepTableModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount())
        return {};
    const int row = index.row();
    const int fixed = fixedColumn(index.column());
    double value = kNaN;
    if (fixed == 0)
        value = m_indices[size_t(row)];
    else if (fixed < 0)
        value = durationMs(row, index.column() - 1);
    else if (fixed == 1)
        value = slowestMs(row);
    else if (fixed == 2) {
        double lo = INFINITY;
        for (int k = 0; k < int(m_ranks.size()); ++k)
            lo = std::isnan(durationMs(row, k)) ? lo : std::min(lo, durationMs(row, k));
        value = std::isfinite(lo) ? slowestMs(row) - lo : kNaN;
    } else
        value = m_median > 0 ? 100.0 * (slowestMs(row) - m_median) / m_median : kNaN;
    switch (role) {
    case Qt::UserRole:
        return std::isnan(value) ? QVariant() : QVariant(value);
    case Qt::DisplayRole:
        if (std::isnan(value))
            return QString();
        if (fixed == 0)
            return qulonglong(value);
        if (fixed == 3)
            return QStringLiteral("%1%2%").arg(value >= 0 ? QStringLiteral("+") : QString()).arg(value, 0, 'f', 1);
        return QString::number(value, 'f', 3);
    case Qt::TextAlignmentRole:
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::BackgroundRole:
        if (fixed == 3 && value > 20)
            return QBrush(QColor(255, 205, 210)); // > 20% slower than the median step
        return {};
    default:
        return {};
    }
}

QVariant StepTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= columnCount())
        return {};
    const int fixed = fixedColumn(section);
    if (fixed < 0)
        return tr("rank %1 (ms)").arg(m_ranks[size_t(section - 1)]);
    static const char* names[] = { "step", "slowest (ms)", "spread (ms)", "vs median" };
    return tr(names[fixed]);
}
