// SPDX-License-Identifier: MIT
#pragma once

// RangeTableModel: kernels by annotated range (model/analysis/kernelranges.h), as `summary --by-range`
// prints them: for eager kernels the NVTX/user ranges open at their launch, for CUDA-graph kernels the
// ranges open where their node was built, else an inferred layer. Columns: range, source (launch,
// capture, inferred, none), kernels, per step, own time, share of the own time. Qt::UserRole gives raw
// numbers for sorting.
//
// Threading: GUI thread (a Qt item model); the table is computed elsewhere and handed over.

#include "model/analysis/kernelranges.h"

#include <QAbstractTableModel>

class RangeTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Range, Source, Count, PerStep, OwnTime, Share, ColumnCount };
    explicit RangeTableModel(QObject* parent = nullptr);

    void setTable(gapscope::model::RangeTable table);
    const gapscope::model::RangeTable& table() const { return m_table; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    gapscope::model::RangeTable m_table;
    gapscope::model::TimeNs m_ownAll = 0;
};
