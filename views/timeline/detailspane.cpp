// SPDX-License-Identifier: MIT
#include "views/timeline/detailspane.h"

#include "model/analysis/hostattribution.h"
#include "model/analysis/kernelranges.h"
#include "views/common/eventcolors.h"
#include "views/common/timeformat.h"
#include "views/timeline/lanelayout.h"
#include "views/timeline/timelinerenderer.h"

#include <QUrl>

#include <algorithm>

using namespace gapscope::model;
namespace pb = gapscope::pb;

namespace {

QString row(const QString& key, const QString& value)
{
    return QStringLiteral("<tr><td style='color:#607d8b;padding-right:8px'>%1</td><td>%2</td></tr>").arg(key, value);
}

QString esc(std::string_view s)
{
    return QString::fromUtf8(s.data(), qsizetype(s.size())).toHtmlEscaped();
}

QString dims(const uint32_t v[3])
{
    return QStringLiteral("(%1, %2, %3)").arg(v[0]).arg(v[1]).arg(v[2]);
}

} // namespace

DetailsPane::DetailsPane(QWidget* parent)
    : QTextBrowser(parent)
{
    setOpenLinks(false);
    setReadOnly(true);
    connect(this, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
        // event:LANE:INDEX
        const QStringList parts = url.toString().split(QLatin1Char(':'));
        if (parts.size() == 3 && parts[0] == QLatin1String("event"))
            emit eventActivated(EventRef { parts[1].toUInt(), parts[2].toUInt() });
    });
    clearDetails();
}

void DetailsPane::setTrace(const Trace* trace, const EventColors* colors)
{
    m_trace = trace;
    m_colors = colors;
    m_origin = trace ? trace->startTime() : 0;
    clearDetails();
}

void DetailsPane::clearDetails()
{
    setHtml(tr("<p style='color:#78909c'>Click an event for its details; shift-drag (or right-drag) on the "
               "timeline to select a range.</p>"));
}

void DetailsPane::showDetails(EventRef ev)
{
    if (!ev.valid())
        return clearDetails();
    setHtml(eventHtml(ev));
}

void DetailsPane::showRange(TimeNs t0, TimeNs t1, const LaneLayout& layout)
{
    setHtml(rangeHtml(t0, t1, layout));
}

QString DetailsPane::stepText(uint32_t rank, TimeNs t) const
{
    const auto& steps = m_trace->steps(rank);
    auto it = std::upper_bound(steps.begin(), steps.end(), t, [](TimeNs v, const Step& s) { return v < s.start; });
    if (it == steps.begin())
        return tr("before the first step");
    --it;
    if (t >= it->end)
        return tr("between steps %1 and %2").arg(it->index).arg(it->index + 1);
    return tr("step %1 (+%2 into it)").arg(it->index).arg(timeformat::duration(double(t - it->start)));
}

QString DetailsPane::kernelRows(EventRef ev) const
{
    QString html;
    const EventKind kind = m_trace->kindOf(ev.lane, ev.index);
    if (const LaneInfo& info = m_trace->lane(ev.lane).info; kind == EventKind::Nvtx && isReplayRangeLane(info))
        html += row(tr("groups"),
            tr("the kernels of one CUDA-graph replay on stream %1 whose nodes were built under this range "
               "(an \"inferred\" layer: the k-th repetition of the graph's layer block)")
                .arg(replayRangeStream(info)));
    if (const KernelConfig* k = kind == EventKind::Kernel ? m_trace->kernelConfig(ev.lane, ev.index) : nullptr) {
        html += row(tr("grid"), dims(k->grid)) + row(tr("block"), dims(k->block));
        if (k->registers)
            html += row(tr("registers/thread"), QString::number(k->registers));
        if (k->sharedStatic || k->sharedDynamic)
            html
                += row(tr("shared memory"), tr("%1 B static, %2 B dynamic").arg(k->sharedStatic).arg(k->sharedDynamic));
        if (k->graphId) {
            html += row(tr("CUDA graph"), tr("graph %1, node %2").arg(k->graphId).arg(k->graphNodeId));
            html += capturedInRow(m_trace->lane(ev.lane).info.rank, k->graphNodeId);
        }
    }
    if (const MemopInfo* m
        = (kind == EventKind::Memcpy || kind == EventKind::Memset) ? m_trace->memop(ev.lane, ev.index) : nullptr) {
        const double dur = double(m_trace->lane(ev.lane).events.duration(ev.index));
        html += row(tr("bytes"), QString::number(m->bytes));
        if (dur > 0)
            html += row(tr("bandwidth"), tr("%1 GB/s").arg(double(m->bytes) / dur, 0, 'f', 2));
        html += row(tr("asynchronous"), m->async ? tr("yes") : tr("no"));
    }
    if (const CollectiveInfo* c = kind == EventKind::Collective ? m_trace->collective(ev.lane, ev.index) : nullptr) {
        html += row(tr("bytes"), QString::number(c->bytes));
        html += row(tr("datatype / algorithm / protocol"),
            QStringLiteral("%1 / %2 / %3")
                .arg(esc(m_trace->str(c->datatype)), esc(m_trace->str(c->algorithm)), esc(m_trace->str(c->protocol))));
        html += row(tr("sequence / channels"), QStringLiteral("%1 / %2").arg(c->sequence).arg(c->channels));
    }
    return html;
}

// Where a graph kernel's node was built: the NVTX ranges open on the building thread then.
QString DetailsPane::capturedInRow(uint32_t rank, uint64_t nodeId) const
{
    if (isWholeReplayNode(nodeId))
        return {};
    const GraphNodeInfo* n = m_trace->graphNode(rank, nodeId);
    if (!n)
        return row(tr("captured in"),
            tr("<i>not recorded</i> (the graph was built before the capture agent watched, or the file has no "
               "node table)"));
    const QString where = n->ranges.empty()
        ? tr("<i>no NVTX range open</i>")
        : esc(rangePath(n->ranges, [this](StringId id) { return std::string(m_trace->str(id)); }));
    const QString type = QString::fromStdString(graphNodeTypeName(n->nodeType));
    QString built = tr("built on thread %1").arg(n->threadId);
    if (n->api)
        built += tr(" in %1").arg(esc(m_trace->str(n->api)));
    return row(tr("captured in"),
        tr("%1 (%2 %3 of graph %4, %5)")
            .arg(where, type.isEmpty() ? tr("node") : tr("%1 node").arg(type))
            .arg(n->order)
            .arg(n->graphId)
            .arg(built));
}

QString DetailsPane::launchRows(EventRef ev) const
{
    const EventRef launch = m_trace->launchOf(ev.lane, ev.index);
    if (!launch.valid())
        return row(tr("launched by"), tr("<i>not recorded</i> (no CPU API lane, or no correlation id)"));
    const LaneEvents& api = m_trace->lane(launch.lane).events;
    const LaneEvents& events = m_trace->lane(ev.lane).events;
    const TimeNs latency = events.start(ev.index) - api.start(launch.index);
    return row(tr("launched by"),
               QStringLiteral("<a href='event:%1:%2'>%3</a> on %4")
                   .arg(launch.lane)
                   .arg(launch.index)
                   .arg(esc(m_trace->str(api.name(launch.index))),
                       LaneLayout::laneLabel(m_trace->lane(launch.lane).info).toHtmlEscaped()))
        + row(tr("launch to start"), timeformat::duration(double(latency)));
}

QString DetailsPane::eventLink(EventRef ev) const
{
    const LaneEvents& events = m_trace->lane(ev.lane).events;
    return QStringLiteral("<a href='event:%1:%2'>%3</a> <span style='color:#607d8b'>(%4, %5)</span>")
        .arg(ev.lane)
        .arg(ev.index)
        .arg(esc(m_trace->str(events.name(ev.index))), QLatin1String(HostAttribution::hostKindName(*m_trace, ev)),
            timeformat::duration(double(events.duration(ev.index))));
}

EventRef DetailsPane::launchingOp(const std::vector<EventRef>& stack) const
{
    for (const EventRef& e : stack)
        if (m_trace->lane(e.lane).info.kind == LaneKind::CpuThread
            && m_trace->hostKind(e.lane, e.index) == HostKind::CpuOp)
            return e;
    return stack.empty() ? EventRef {} : stack.front();
}

QString DetailsPane::hostRows(EventRef call) const
{
    // The CPU operator the call ran in and every host range around it, innermost first.
    const std::vector<EventRef> stack = HostAttribution::enclosing(*m_trace, call);
    if (stack.empty())
        return row(tr("host stack"), tr("<i>no host range around the call</i>"));
    QString html = row(tr("launching op"), eventLink(launchingOp(stack)));
    QStringList lines;
    for (const EventRef& e : stack)
        lines << eventLink(e);
    return html + row(tr("host stack"), lines.join(QStringLiteral("<br>")));
}

QString DetailsPane::eventHtml(EventRef ev) const
{
    if (!m_trace || !ev.valid() || ev.lane >= m_trace->laneCount() || ev.index >= m_trace->lane(ev.lane).events.size())
        return {};
    const Lane& lane = m_trace->lane(ev.lane);
    const LaneEvents& events = lane.events;
    const StringId nameId = events.name(ev.index);
    const EventKind kind = m_trace->kindOf(ev.lane, ev.index);
    QString html = QStringLiteral("<p><b>%1</b></p><p style='font-family:monospace;font-size:small'>%2</p><table>")
                       .arg(QLatin1String(toString(kind)), esc(m_trace->str(nameId)));
    const TimeNs start = events.start(ev.index);
    html += row(tr("start"), QStringLiteral("+%1").arg(timeformat::duration(double(start - m_origin), 9)));
    html += row(tr("duration"), timeformat::duration(double(events.duration(ev.index)), 4));
    html += row(tr("end"),
        QStringLiteral("+%1").arg(timeformat::duration(double(events.end(ev.index) - m_origin), 9)));
    html += row(tr("lane"),
        LaneLayout::laneLabel(lane.info).toHtmlEscaped()
            + QStringLiteral(" · rank %1 · %2").arg(lane.info.rank).arg(esc(lane.info.host)));
    html += row(tr("decode step"), stepText(lane.info.rank, start));
    if (m_colors && m_colors->component(nameId) >= 0)
        html += row(tr("component"), m_colors->components()[size_t(m_colors->component(nameId))].toHtmlEscaped());
    if (events.correlation(ev.index))
        html += row(tr("correlation id"), QString::number(events.correlation(ev.index)));
    html += kernelRows(ev);
    if (lane.info.kind == LaneKind::GpuStream) {
        html += launchRows(ev);
        if (const EventRef launch = m_trace->launchOf(ev.lane, ev.index); launch.valid())
            html += hostRows(launch);
    }
    if (lane.info.kind == LaneKind::CpuThread)
        html += row(tr("host range"),
            tr("%1, depth %2")
                .arg(QLatin1String(HostAttribution::hostKindName(*m_trace, ev)))
                .arg(m_trace->hostDepth(ev.lane, ev.index)));
    if (lane.info.kind == LaneKind::CpuApi) {
        html += hostRows(ev);
        for (const EventRef& k : m_trace->launchedBy(ev.lane, ev.index)) {
            const LaneEvents& ke = m_trace->lane(k.lane).events;
            html += row(tr("launched"),
                QStringLiteral("<a href='event:%1:%2'>%3</a>")
                    .arg(k.lane)
                    .arg(k.index)
                    .arg(TimelineRenderer::shortName(m_trace->str(ke.name(k.index))).toHtmlEscaped()));
        }
    }
    return html + QStringLiteral("</table>");
}

QString DetailsPane::rangeHtml(TimeNs t0, TimeNs t1, const LaneLayout& layout) const
{
    if (!m_trace || t1 <= t0)
        return {};
    QString html
        = tr("<p><b>Selected range</b> %1 (from +%2)</p><table>")
              .arg(timeformat::duration(double(t1 - t0)), timeformat::duration(double(t0 - m_origin), 6));
    html += QStringLiteral(
        "<tr><th align='left'>lane</th><th align='right'>events</th><th align='right'>busy</th></tr>");
    for (const LaneRow& r : layout.rows()) {
        if (r.type != LaneRow::Type::Lane || r.kind != LaneKind::GpuStream)
            continue;
        const Lane& lane = m_trace->lane(r.lane);
        const LaneSummary::Totals t = lane.summary.totals(lane.events, t0, t1);
        html += QStringLiteral("<tr><td>rank %1 · %2</td><td align='right'>%3</td><td align='right'>%4%</td></tr>")
                    .arg(r.rank)
                    .arg(r.label.toHtmlEscaped())
                    .arg(t.count)
                    .arg(100.0 * double(t.busy) / double(t1 - t0), 0, 'f', 1);
    }
    return html
        + QStringLiteral("</table><p style='color:#78909c'>The tables below show the range's kernel statistics.</p>");
}
