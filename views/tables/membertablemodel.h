// SPDX-License-Identifier: MIT
#pragma once

// MemberTableModel: the kernels and idle gaps behind one waterfall bar (what a click on the bar
// lights up on the timeline), one row each: rank, what (kernel name, or the idle kind), start
// (relative to the trace start), duration and, for a launch/host gap or sync stall, the host event
// behind it (the one with the most time in the gap; a sync stall: the blocking call, in that event).
// Qt::UserRole gives raw numbers for sorting.
//
// Threading: GUI thread (a Qt item model).

#include "views/analysis/analysisrunner.h"

#include <QAbstractTableModel>

class MemberTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Rank, What, Start, Duration, Host, FullName, ColumnCount };
    explicit MemberTableModel(QObject* parent = nullptr);

    // `idleLabel` names the idle rows (e.g. "launch/host gap").
    void setMembers(const gapscope::model::Trace* trace, std::vector<BarMember> members, const QString& idleLabel);
    // Times are shown from here (the trace's start; a large file's window: the file's).
    void setTimeOrigin(gapscope::model::TimeNs origin) { m_origin = origin; }
    const BarMember* member(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // The Host column's text of a member ("" when none).
    QString hostText(const BarMember& m) const;

private:
    const gapscope::model::Trace* m_trace = nullptr;
    gapscope::model::TimeNs m_origin = 0;
    std::vector<BarMember> m_members;
    QString m_idleLabel;
};
