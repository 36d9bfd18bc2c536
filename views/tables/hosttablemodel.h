// SPDX-License-Identifier: MIT
#pragma once

// HostTableModel: what the host was doing in the GPU's idle time, per rank over all steps (the
// aggregate of HostAttribution that `gapscope-cli analyze` prints as host_gaps and host_syncs). One
// row per (rank, gap kind, host event): launch/host gaps by the host event each moment went to
// (name, kind: cpu_op, python_function, user_annotation, nvtx, cuda_runtime, os_runtime, ...), then
// the rank's unattributed time by why (next kernel already queued; launching thread idle while another
// thread was busy, followed by those threads' events as "other thread: NAME"; nothing recorded; launch
// not recorded), then sync stalls by blocking call and the host event around it.
// Columns: rank, gap, host event, kind, time, count (the gaps it got time in), share of the rank's
// gap time of that kind. Qt::UserRole gives raw numbers for sorting; gapsOf(row) the gaps (indices
// into HostAttribution::gaps()) a click lights up.
//
// Threading: GUI thread (a Qt item model). The rows are copies: the attribution may go afterwards
// (the gap indices then refer to any attribution of the same trace and analysis).

#include "model/analysis/hostattribution.h"

#include <QAbstractTableModel>

#include <array>
#include <vector>

class HostTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Rank, Gap, HostEvent, Kind, Time, Count, Share, ColumnCount };
    struct Row {
        uint32_t rank = 0;
        gapscope::model::IdleKind gap = gapscope::model::IdleKind::LaunchHost;
        gapscope::model::StringId name = 0; // the host event's name (0: unattributed, or a sync row)
        QString event; // as shown
        QString kind;
        gapscope::model::TimeNs ns = 0;
        uint64_t count = 0;
        double share = 0; // of the rank's launch/host gap time (sync rows: of its sync stall time)
        std::vector<uint32_t> gaps; // into HostAttribution::gaps()
        bool wholeRank = false; // the row's gaps are every launch/host gap of the rank (none kept: no host lanes)
    };
    explicit HostTableModel(QObject* parent = nullptr);

    void setAttribution(const gapscope::model::Trace* trace, const gapscope::model::HostAttribution* host);
    const Row* row(int r) const;
    const std::vector<Row>& rows() const { return m_rows; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    static constexpr size_t kWhy = 4; // unattributed: queued, other threads, nothing, no launch
    void addRank(const gapscope::model::Trace& trace, const gapscope::model::HostAttribution::Rank& r,
        std::array<std::vector<uint32_t>, kWhy>& whyGaps);
    std::vector<Row> m_rows;
};
