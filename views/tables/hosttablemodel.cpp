// SPDX-License-Identifier: MIT
#include "views/tables/hosttablemodel.h"

#include "views/common/timeformat.h"

#include <map>

using namespace gapscope::model;

HostTableModel::HostTableModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void HostTableModel::setAttribution(const Trace* trace, const HostAttribution* host)
{
    beginResetModel();
    m_rows.clear();
    if (trace && host) {
        // The gaps behind each rank's unattributed rows, in one pass over all gaps.
        std::map<uint32_t, std::array<std::vector<uint32_t>, kWhy>> why;
        const auto& gaps = host->gaps();
        for (uint32_t i = 0; i < gaps.size(); ++i) {
            const HostAttribution::Gap& g = gaps[i];
            if (g.gap.kind != IdleKind::LaunchHost || g.explained >= g.gap.duration())
                continue;
            auto& lists = why[g.gap.rank];
            const TimeNs parts[kWhy] = { g.queued, g.otherThreads, g.nothing, g.noLaunch };
            for (size_t k = 0; k < kWhy; ++k)
                if (parts[k] > 0)
                    lists[k].push_back(i);
        }
        for (const HostAttribution::Rank& r : host->ranks())
            addRank(*trace, r, why[r.rank]);
    }
    endResetModel();
}

void HostTableModel::addRank(
    const Trace& trace, const HostAttribution::Rank& r, std::array<std::vector<uint32_t>, kWhy>& whyGaps)
{
    auto share = [](TimeNs ns, TimeNs of) { return of > 0 ? double(ns) / double(of) : 0.0; };
    for (const HostAttribution::Row& h : r.rows)
        m_rows.push_back(
            Row { r.rank, IdleKind::LaunchHost, h.name, QString::fromStdString(std::string(trace.str(h.name))),
                QLatin1String(h.kind), h.ns, h.count, share(h.ns, r.gapNs), h.gaps });
    // The unattributed time, by why; the other threads' events behind it right after theirs.
    auto why = [&](const QString& label, TimeNs ns, uint64_t count, std::vector<uint32_t>& gaps) {
        if (ns <= 0)
            return;
        m_rows.push_back(Row { r.rank, IdleKind::LaunchHost, 0, label, QString(), ns, count, share(ns, r.gapNs),
            std::move(gaps), !r.gapsKept });
    };
    why(tr("(unattributed: next kernel already queued)"), r.queuedNs, r.queuedGaps, whyGaps[0]);
    why(tr("(unattributed: launching thread idle, another thread busy)"), r.otherThreadsNs, r.otherThreadsGaps,
        whyGaps[1]);
    for (const HostAttribution::Row& h : r.otherThreads)
        m_rows.push_back(Row { r.rank, IdleKind::LaunchHost, h.name,
            tr("other thread: %1").arg(QString::fromStdString(std::string(trace.str(h.name)))), QLatin1String(h.kind),
            h.ns, h.count, share(h.ns, r.gapNs), h.gaps });
    why(tr("(unattributed: nothing recorded on the process's threads)"), r.nothingNs, r.nothingGaps, whyGaps[2]);
    why(tr("(unattributed: launch not recorded)"), r.noLaunchNs, r.noLaunchGaps, whyGaps[3]);
    for (const HostAttribution::SyncRow& s : r.syncs) {
        const QString call = QString::fromStdString(s.call);
        const QString event
            = s.around ? tr("%1 in %2").arg(call, QString::fromStdString(std::string(trace.str(s.around)))) : call;
        m_rows.push_back(Row { r.rank, IdleKind::SyncStall, 0, event, QLatin1String(s.aroundKind), s.ns, s.count,
            share(s.ns, r.syncNs), s.gaps });
    }
}

const HostTableModel::Row* HostTableModel::row(int r) const
{
    return r >= 0 && r < int(m_rows.size()) ? &m_rows[size_t(r)] : nullptr;
}

int HostTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int HostTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant HostTableModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount)
        return {};
    const Row& r = m_rows[size_t(index.row())];
    if (role == Qt::ToolTipRole && index.column() == HostEvent)
        return r.event;
    if (role == Qt::TextAlignmentRole && index.column() >= Time)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole && role != Qt::UserRole)
        return {};
    const bool sortKey = role == Qt::UserRole; // the value to sort by, not the text
    switch (index.column()) {
    case Rank:
        return r.rank;
    case Gap:
        return r.gap == IdleKind::SyncStall ? tr("sync stall") : tr("launch/host gap");
    case HostEvent:
        return r.event;
    case Kind:
        return r.kind;
    case Time:
        return sortKey ? QVariant(qlonglong(r.ns)) : QVariant(timeformat::duration(double(r.ns)));
    case Count:
        return qulonglong(r.count);
    case Share:
        return sortKey ? QVariant(r.share) : QVariant(QStringLiteral("%1%").arg(100.0 * r.share, 0, 'f', 1));
    }
    return {};
}

QVariant HostTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    static const char* names[] = { "rank", "gap", "host event", "kind", "time", "count", "share of gap" };
    static_assert(sizeof(names) / sizeof(names[0]) == ColumnCount, "one header per column");
    return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}
