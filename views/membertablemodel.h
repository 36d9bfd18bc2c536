// SPDX-License-Identifier: MIT
#pragma once

// MemberTableModel: the kernels and idle gaps behind one waterfall bar (what a click on the bar
// lights up on the timeline), one row each: rank, what (kernel name, or the idle kind), start
// (relative to the trace start) and duration. Qt::UserRole gives raw numbers for sorting.
//
// Threading: GUI thread (a Qt item model).

#include "views/analysisrunner.h"

#include <QAbstractTableModel>

class MemberTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Rank, What, Start, Duration, FullName, ColumnCount };
    explicit MemberTableModel(QObject* parent = nullptr);

    // `idleLabel` names the idle rows (e.g. "launch/host gap").
    void setMembers(const gapscope::model::Trace* trace, std::vector<BarMember> members, const QString& idleLabel);
    const BarMember* member(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    const gapscope::model::Trace* m_trace = nullptr;
    std::vector<BarMember> m_members;
    QString m_idleLabel;
};
