// SPDX-License-Identifier: MIT
#pragma once

// StepTableModel: one row per decode step (aligned index), with the step's duration on each rank,
// then the slowest rank, the spread (slowest - fastest) and the deviation of the slowest rank from
// the median step (outliers stand out). Qt::UserRole returns raw numbers (ms; step index) for
// numeric sorting. Built from the Trace's steps in O(steps x ranks).
//
// Threading: GUI thread (a Qt item model).

#include "model/trace/trace.h"

#include <QAbstractTableModel>

#include <vector>

class StepTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    explicit StepTableModel(QObject* parent = nullptr);

    void setTrace(const gapscope::model::Trace* trace);
    // Step durations per rank in ms (NaN where a rank lacks the step).
    const std::vector<uint32_t>& stepIndices() const { return m_indices; }
    const std::vector<uint32_t>& ranks() const { return m_ranks; }
    double durationMs(int row, int rankColumn) const;
    double slowestMs(int row) const;
    double medianSlowestMs() const { return m_median; }
    // Time window of a row: from the earliest start to the latest end over ranks.
    std::pair<gapscope::model::TimeNs, gapscope::model::TimeNs> window(int row) const;
    // Row of step `index`, or -1.
    int rowOfStep(uint32_t index) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    int fixedColumn(int column) const; // 0 step, then ranks, then slowest/spread/vs median (-1 for ranks)
    std::vector<uint32_t> m_indices;
    std::vector<uint32_t> m_ranks;
    std::vector<double> m_ms; // row-major: m_ms[row * ranks + r]
    std::vector<std::pair<gapscope::model::TimeNs, gapscope::model::TimeNs>> m_windows;
    double m_median = 0;
};
