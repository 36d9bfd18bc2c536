// SPDX-License-Identifier: MIT
#include "views/tables/membertablemodel.h"

#include "model/analysis/hostattribution.h"
#include "views/common/statstable.h"
#include "views/common/timeformat.h"
#include "views/timeline/timelinerenderer.h"

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

QString MemberTableModel::hostText(const BarMember& m) const
{
    auto name = [this](EventRef e) {
        return QString::fromStdString(std::string(m_trace->str(m_trace->lane(e.lane).events.name(e.index))));
    };
    QString host;
    if (m.host.valid() && m.host.lane < m_trace->laneCount())
        host = QStringLiteral("%1 (%2)").arg(
            name(m.host), QLatin1String(HostAttribution::hostKindName(*m_trace, m.host)));
    if (m.syncCall.valid() && m.syncCall.lane < m_trace->laneCount()) {
        const QString call = m_trace->kindOf(m.syncCall.lane, m.syncCall.index) == EventKind::Api ? name(m.syncCall)
                                                                                                  : tr("sync record");
        return host.isEmpty() ? call : tr("%1 in %2").arg(call, host);
    }
    return host;
}

QVariant MemberTableModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount || !m_trace)
        return {};
    const BarMember& m = m_members[size_t(index.row())];
    const TimeNs origin = m_origin;
    QString what = m_idleLabel;
    QString full = m_idleLabel;
    if (m.event.valid() && m.event.lane < m_trace->laneCount()) {
        const LaneEvents& ev = m_trace->lane(m.event.lane).events;
        full = QString::fromStdString(std::string(m_trace->str(ev.name(m.event.index))));
        what = TimelineRenderer::shortName(m_trace->str(ev.name(m.event.index)));
    }
    if (index.column() == FullName && (role == Qt::DisplayRole || role == Qt::UserRole))
        return full;
    if (index.column() == Host && (role == Qt::DisplayRole || role == Qt::UserRole || role == Qt::ToolTipRole))
        return hostText(m);
    if (role == StatsTable::FilterRole)
        return index.column() == What ? QString(what + QLatin1Char('\n') + full + QLatin1Char('\n') + hostText(m))
                                      : QVariant();
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
    static const char* names[] = { "rank", "kernel / gap", "start", "duration", "host event", "full name" };
    static_assert(sizeof(names) / sizeof(names[0]) == ColumnCount, "one header per column");
    return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}
