// SPDX-License-Identifier: MIT
#include "views/compare/stepdiffmodel.h"

#include <QBrush>
#include <QColor>

#include <cmath>
#include <limits>

using namespace gapscope::model;

namespace {

// The measured step `index` on the trace's critical rank of that step, or NaN.
double criticalStepMs(const GapAnalyzer& an, uint32_t index, int& rank)
{
    rank = an.isIncomplete(index) ? -1 : an.criticalRank(index);
    const GapAnalyzer::StepRecord* rec = rank >= 0 ? an.step(uint32_t(rank), index) : nullptr;
    if (!rec)
        rank = -1;
    return rec ? double(rec->measured()) / 1e6 : std::numeric_limits<double>::quiet_NaN();
}

} // namespace

StepDiffModel::StepDiffModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void StepDiffModel::setDiff(const TraceDiff* diff)
{
    beginResetModel();
    m_rows.clear();
    if (diff && diff->steps().common)
        for (uint32_t i = diff->steps().first; i <= diff->steps().last; ++i) {
            Row r;
            r.index = i;
            r.aMs = criticalStepMs(diff->a(), i, r.rankA);
            r.bMs = criticalStepMs(diff->b(), i, r.rankB);
            m_rows.push_back(r);
        }
    endResetModel();
}

int StepDiffModel::rowOfStep(uint32_t index) const
{
    for (size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].index == index)
            return int(i);
    return -1;
}

int StepDiffModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int StepDiffModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant StepDiffModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount())
        return {};
    const Row& r = m_rows[size_t(index.row())];
    const double d = r.bMs - r.aMs; // NaN when a side lacks the step
    if (role == Qt::UserRole) {
        switch (index.column()) {
        case Step:
            return r.index;
        case A:
            return r.aMs;
        case B:
            return r.bMs;
        case Delta:
            return d;
        case RankA:
            return r.rankA;
        case RankB:
            return r.rankB;
        }
        return {};
    }
    if (role == Qt::TextAlignmentRole)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ForegroundRole && index.column() == Delta && !std::isnan(d) && std::fabs(d) >= 0.0005)
        return QBrush(d > 0 ? QColor(190, 40, 40) : QColor(30, 130, 60));
    if (role != Qt::DisplayRole)
        return {};
    auto msText = [](double v, bool sign) {
        if (std::isnan(v))
            return QStringLiteral("–");
        return (sign && v > 0.0005 ? QStringLiteral("+") : QString()) + QString::number(v, 'f', 3);
    };
    switch (index.column()) {
    case Step:
        return r.index;
    case A:
        return msText(r.aMs, false);
    case B:
        return msText(r.bMs, false);
    case Delta:
        return msText(d, true);
    case RankA:
        return r.rankA >= 0 ? QVariant(r.rankA) : QVariant(QStringLiteral("–"));
    case RankB:
        return r.rankB >= 0 ? QVariant(r.rankB) : QVariant(QStringLiteral("–"));
    }
    return {};
}

QVariant StepDiffModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    static const char* const kNames[] = { "step", "A (ms)", "B (ms)", "Δ (ms)", "rank A", "rank B" };
    return section >= 0 && section < ColumnCount ? QString::fromUtf8(kNames[section]) : QVariant();
}
