// SPDX-License-Identifier: MIT
#pragma once

// BarDiffModel: the waterfall bars of A and B side by side (model::TraceDiff::Waterfall): name, A,
// B and the change (ms per step), in the diff's order (largest |change| first). A side without the
// bar shows "–". Qt::UserRole returns the raw ms (NaN where absent) for numeric sorting.
//
// Threading: GUI thread (a Qt item model).

#include "model/analysis/tracediff.h"

#include <QAbstractTableModel>

class BarDiffModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Name, A, B, Delta, ColumnCount };

    explicit BarDiffModel(QObject* parent = nullptr);
    void setWaterfall(const gapscope::model::TraceDiff::Waterfall& waterfall);
    const gapscope::model::TraceDiff::Waterfall& waterfall() const { return m_waterfall; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    gapscope::model::TraceDiff::Waterfall m_waterfall;
};
