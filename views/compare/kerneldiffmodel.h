// SPDX-License-Identifier: MIT
#pragma once

// KernelDiffModel: the kernel table of a comparison (model::TraceDiff::kernels()): per kernel name
// the count, total, own total and median in A and B with the changes, and how the name was paired
// ("exact", "normalised": after collapsing template arguments and parameter lists, "new" in B,
// "vanished" from B); the full name(s) last. The name column shows the short form
// (model::shortKernelName), the full names on hover. Qt::UserRole returns raw numbers (ns; NaN for a
// median that is unknown or absent) so a QSortFilterProxyModel sorts numerically.
//
// Threading: GUI thread (a Qt item model).

#include "model/analysis/tracediff.h"

#include <QAbstractTableModel>

class KernelDiffModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Name,
        Match,
        CountA,
        CountB,
        TotalA,
        TotalB,
        DeltaTotal,
        OwnA,
        OwnB,
        DeltaOwn,
        MedianA,
        MedianB,
        FullName,
        ColumnCount
    };

    explicit KernelDiffModel(QObject* parent = nullptr);
    void setKernels(const std::vector<gapscope::model::TraceDiff::KernelDelta>& kernels);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant raw(const gapscope::model::TraceDiff::KernelDelta& k, int column) const;

    std::vector<gapscope::model::TraceDiff::KernelDelta> m_rows;
    std::vector<QString> m_short; // short names, by row
};
