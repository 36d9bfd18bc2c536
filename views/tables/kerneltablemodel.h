// SPDX-License-Identifier: MIT
#pragma once

// KernelTableModel: per kernel name (or per component) statistics as a table: name, component,
// count, total, own total, mean, p50, p99, max, % of step, bytes and achieved GB/s (with the
// ceiling, when a bandwidth ceiling is set), and the full name last (hidden in the view, kept in
// CSV). The name column shows the short form (model::shortKernelName), the full demangled name on
// hover; StatsTable::FilterRole gives both, so a filter matches either. Display text uses sensible
// units; Qt::UserRole returns the raw number (ns, bytes, GB/s) so a QSortFilterProxyModel sorts
// numerically (sortRole = Qt::UserRole).
//
// Threading: GUI thread (a Qt item model); the statistics are computed elsewhere (computeKernelStats).

#include "views/tables/kernelstats.h"

#include <QAbstractTableModel>

class KernelTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Name,
        Component,
        Count,
        Total,
        OwnTotal,
        Mean,
        P50,
        P99,
        Max,
        PercentOfStep,
        Bytes,
        Bandwidth,
        FullName,
        ColumnCount
    };
    enum class Mode { Names, Components };

    explicit KernelTableModel(Mode mode, QObject* parent = nullptr);

    void setStats(const KernelStatsResult& stats);
    // Peak memory bandwidth in GB/s used as the ceiling in the bandwidth column (0 = unknown).
    void setBandwidthCeiling(double gbs);
    const NameStats* row(int r) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant displayData(const NameStats& s, int column) const;
    QVariant rawData(const NameStats& s, int column) const;
    Mode m_mode;
    std::vector<NameStats> m_rows;
    double m_ceiling = 0;
};
