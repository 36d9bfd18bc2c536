// SPDX-License-Identifier: MIT
#pragma once

// StepDiffModel: the step table of a comparison: one row per step index of the compared range
// (model::TraceDiff::steps()), with the measured step of A and of B (each taken from its critical
// rank, as the waterfall's critical path does), the change, and the two ranks. A step complete in
// only one trace shows "–" on the other side. Qt::UserRole returns raw numbers (ms, NaN where
// absent; indices) for numeric sorting.
//
// Threading: GUI thread (a Qt item model).

#include "model/analysis/gapanalyzer.h"
#include "model/analysis/tracediff.h"

#include <QAbstractTableModel>

class StepDiffModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Step, A, B, Delta, RankA, RankB, ColumnCount };

    explicit StepDiffModel(QObject* parent = nullptr);
    void setDiff(const gapscope::model::TraceDiff* diff);
    uint32_t stepIndex(int row) const { return m_rows[size_t(row)].index; }
    int rowOfStep(uint32_t index) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        uint32_t index = 0;
        double aMs, bMs; // NaN where the side lacks the step
        int rankA = -1, rankB = -1;
    };
    std::vector<Row> m_rows;
};
