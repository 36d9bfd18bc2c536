// SPDX-License-Identifier: MIT
#include "views/membertablemodel.h"

#include "views/statstable.h"
#include "views/timeformat.h"
#include "views/timelinerenderer.h"

using namespace gapscope::model;

MemberTableModel::MemberTableModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void MemberTableModel::setMembers(const Trace* trace, std::vector<BarMember> members, const QString& idleLabel)
{
    beginResetModel();
    m_trace = trace;
    m_members = std::move(members);
    m_idleLabel = idleLabel;
    endResetModel();
}

const BarMember* MemberTableModel::member(int row) const
{
    return row >= 0 && row < int(m_members.size()) ? &m_members[size_t(row)] : nullptr;
}

int MemberTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_members.size());
}

int MemberTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant MemberTableModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount || !m_trace)
        return {};
    const BarMember& m = m_members[size_t(index.row())];
    const TimeNs origin = m_trace->startTime();
    QString what = m_idleLabel;
    QString full = m_idleLabel;
    if (m.event.valid() && m.event.lane < m_trace->laneCount()) {
        const LaneEvents& ev = m_trace->lane(m.event.lane).events;
        full = QString::fromStdString(std::string(m_trace->str(ev.name(m.event.index))));
        what = TimelineRenderer::shortName(m_trace->str(ev.name(m.event.index)));
    }
    if (index.column() == FullName && (role == Qt::DisplayRole || role == Qt::UserRole))
        return full;
    if (role == StatsTable::FilterRole)
        return index.column() == What ? QString(what + QLatin1Char('\n') + full) : QVariant();
    if (role == Qt::UserRole) {
        switch (index.column()) {
        case Rank:
            return m.rank;
        case What:
            return what;
        case Start:
            return qlonglong(m.start - origin);
        case Duration:
            return qlonglong(m.end - m.start);
        }
    }
    if (role == Qt::ToolTipRole && index.column() == What)
        return full;
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case Rank:
        return m.rank;
    case What:
        return what;
    case Start:
        return QStringLiteral("+") + timeformat::duration(double(m.start - origin), 6);
    case Duration:
        return timeformat::duration(double(m.end - m.start));
    }
    return {};
}

QVariant MemberTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    static const char* names[] = { "rank", "kernel / gap", "start", "duration", "full name" };
    return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}
