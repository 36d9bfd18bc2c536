// SPDX-License-Identifier: MIT
// The host side in the viewer, on a synth trace with CPU operators, Python frames and an injected
// host op (and on a real Kineto trace when the corpus is there): the "CPU threads" group of each
// rank (closed by default, opened by a click), the flames' depths, launch -> kernel flows, the
// details pane's launching operator and host stack, the Host table against synth's ground truth and
// against `gapscope-cli analyze --json`, a Host row lighting up its gaps, the bar members' host
// events, and the headless export with the CPU lanes open.
#include "model/base/json.h"
#include "model/io/tracefile.h"
#include "model/synth/synth.h"
#include "views/analysis/analysisrunner.h"
#include "views/common/eventcolors.h"
#include "views/common/statstable.h"
#include "views/document/tracedocument.h"
#include "views/document/workspace.h"
#include "views/tables/hosttablemodel.h"
#include "views/tables/membertablemodel.h"
#include "views/tables/statspanel.h"
#include "views/timeline/detailspane.h"
#include "views/timeline/launchflows.h"
#include "views/timeline/timelinewidget.h"

#include <QAbstractItemModelTester>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <map>
#include <set>

using namespace gapscope::model;
namespace json = gapscope::json;

class TstHostView : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void cpuLanesClosedByDefault();
    void cpuLanesOpenOnClick();
    void flameDepths();
    void flowEndpointsMatchCorrelation();
    void detailsNameTheLaunchingOp();
    void hostTableEqualsTruth();
    void hostRowLightsItsGaps();
    void barMembersNameTheirHostEvent();
    void syncStallsNameTheirCall();
    void headlessExportShowsCpuLanes();
    void realKinetoTrace();

private:
    std::vector<LaneId> lanesOf(LaneKind kind, uint32_t rank) const;
    QTemporaryDir m_tmp;
    QString m_path;
    json::Value m_truth;
    std::shared_ptr<TraceDocument> m_doc;
    std::unique_ptr<Workspace> m_ws;
};

void TstHostView::initTestCase()
{
    SynthOptions o;
    o.ranks = 2;
    o.steps = 4;
    o.kernelsPerStep = 24;
    o.graphMode = false; // one cudaLaunchKernel per kernel, each inside an aten:: operator
    o.hostOps = true;
    o.hostOpUs = 30;
    o.seed = 11;
    auto trace = synthesize(o, &m_truth);
    QVERIFY(trace);
    m_path = m_tmp.filePath(QStringLiteral("host.gapscope"));
    QVERIFY(writeTraceFile(*trace, m_path.toStdString()));
    m_doc = TraceDocument::fromTrace(std::move(*trace), m_path);
    m_ws = std::make_unique<Workspace>();
    m_ws->analysis()->setAsync(false);
    m_ws->resize(1500, 900);
    m_ws->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_ws.get()));
    m_ws->setDocument(m_doc);
    m_ws->analysis()->runNow();
    m_ws->timeline()->zoomToAll();
}

std::vector<LaneId> TstHostView::lanesOf(LaneKind kind, uint32_t rank) const
{
    std::vector<LaneId> out;
    for (const Lane& l : m_doc->trace->lanes())
        if (l.info.kind == kind && l.info.rank == rank && !l.events.empty())
            out.push_back(l.id);
    return out;
}

void TstHostView::cpuLanesClosedByDefault()
{
    const LaneLayout& layout = m_ws->timeline()->laneLayout();
    for (uint32_t rank : { 0u, 1u }) {
        QCOMPARE(lanesOf(LaneKind::CpuThread, rank).size(), size_t(1));
        const int group = layout.rowOfCpuGroup(rank);
        QVERIFY(group > layout.rowOfRank(rank));
        QCOMPARE(layout.rows()[size_t(group)].type, LaneRow::Type::CpuHeader);
        QCOMPARE(layout.rows()[size_t(group)].label, QStringLiteral("CPU thread"));
        // Closed: neither the flame nor the thread's CUDA API row is laid out; the GPU stream is.
        QCOMPARE(layout.rowOfLane(lanesOf(LaneKind::CpuThread, rank)[0]), -1);
        QCOMPARE(layout.rowOfLane(lanesOf(LaneKind::CpuApi, rank)[0]), -1);
        const int stream = layout.rowOfLane(lanesOf(LaneKind::GpuStream, rank)[0]);
        QVERIFY(stream >= 0 && stream < group); // the CPU side lies under the GPU streams
    }
}

void TstHostView::cpuLanesOpenOnClick()
{
    TimelineWidget* tl = m_ws->timeline();
    const LaneLayout& layout = tl->laneLayout();
    const int group = layout.rowOfCpuGroup(0);
    const LaneRow row = layout.rows()[size_t(group)];
    const QPoint at(tl->view().headerWidth / 2, TimelineRenderer::widgetY(row.y + row.height / 2, tl->view()));
    QTest::mouseClick(tl, Qt::LeftButton, {}, at);
    QVERIFY(tl->layoutOptions().openCpuRanks.count(0));
    QVERIFY(!tl->layoutOptions().openCpuRanks.count(1));
    const LaneId thread = lanesOf(LaneKind::CpuThread, 0)[0];
    const LaneId api = lanesOf(LaneKind::CpuApi, 0)[0];
    const int flame = tl->laneLayout().rowOfLane(thread);
    QCOMPARE(flame, tl->laneLayout().rowOfCpuGroup(0) + 1); // the thread's flame, then its API row
    QCOMPARE(tl->laneLayout().rowOfLane(api), flame + 1);
    QCOMPARE(tl->laneLayout().rowOfLane(lanesOf(LaneKind::CpuThread, 1)[0]), -1); // rank 1 stays closed
    tl->grab();
    const QString label = tl->renderer().paintedHeaderLabel(tl->laneLayout().rowOfCpuGroup(0));
    QVERIFY2(label.startsWith(QStringLiteral("▾")), qPrintable(label));
    QVERIFY(tl->renderer().paintedHeaderLabel(tl->laneLayout().rowOfCpuGroup(1)).startsWith(QStringLiteral("▸")));
}

void TstHostView::flameDepths()
{
    TimelineWidget* tl = m_ws->timeline();
    const Trace& t = *m_doc->trace;
    const LaneId thread = lanesOf(LaneKind::CpuThread, 0)[0];
    const LaneEvents& ev = t.lane(thread).events;
    // synth: model.forward (Python) at depth 0 around each step's launches, aten::<class> operators at
    // depth 1 around each launch, synth::host_delay operators at depth 1 too.
    std::map<std::string, std::set<uint32_t>> depths;
    for (size_t i = 0; i < ev.size(); ++i)
        depths[std::string(t.str(ev.name(i)))].insert(t.hostDepth(thread, i));
    QCOMPARE(depths["model.forward"], std::set<uint32_t> { 0 });
    QCOMPARE(depths["synth::host_delay"], std::set<uint32_t> { 1 });
    QCOMPARE(t.hostKind(thread, 0), HostKind::Python);
    const int r = tl->laneLayout().rowOfLane(thread);
    QVERIFY(r >= 0);
    const LaneRow& row = tl->laneLayout().rows()[size_t(r)];
    QCOMPARE(row.levels, 2);
    QCOMPARE(row.height, 2 * tl->layoutOptions().nvtxRowHeight);
    // The frame folds the flame per depth; an operator is drawn one level below the frame around it.
    size_t forward = 0, op = 0;
    for (size_t i = 0; i < ev.size(); ++i) {
        if (t.hostDepth(thread, i) == 0 && !forward)
            forward = i + 1;
        if (t.hostDepth(thread, i) == 1 && !op)
            op = i + 1;
    }
    QVERIFY(forward && op);
    const QRectF outer = tl->renderer().eventRect(EventRef { thread, uint32_t(forward - 1) }, tl->view());
    const QRectF inner = tl->renderer().eventRect(EventRef { thread, uint32_t(op - 1) }, tl->view());
    QCOMPARE(inner.top() - outer.top(), double(tl->layoutOptions().nvtxRowHeight));
    tl->zoomToRange(ev.start(op - 1), ev.end(op - 1), 0.2);
    tl->renderer().prepare(tl->canvasSize(), tl->view());
    const TimelineFrame& frame = tl->renderer().frame();
    const int k = frame.frameRowOf(r);
    QVERIFY(k >= 0);
    std::set<uint8_t> seen;
    for (const FoldItem& it : frame.items(size_t(k))) {
        seen.insert(it.depth);
        if (it.count == 1)
            QCOMPARE(uint32_t(it.depth), t.hostDepth(thread, it.first));
    }
    QCOMPARE(seen, (std::set<uint8_t> { 0, 1 }));
    // Colour by kind: the operator's colour is one of the cpu_op shades, the frame's a Python one.
    const QColor opColor = QColor::fromRgb(EventColors::hostColor(HostKind::CpuOp, ev.name(op - 1)));
    QVERIFY(std::abs(opColor.hue() - EventColors::hostKindColor(HostKind::CpuOp).hue()) <= 3);
    tl->zoomToAll();
}

void TstHostView::flowEndpointsMatchCorrelation()
{
    const Trace& t = *m_doc->trace;
    const LaneId stream = lanesOf(LaneKind::GpuStream, 0)[0];
    const LaneId api = lanesOf(LaneKind::CpuApi, 0)[0];
    const LaneEvents& k = t.lane(stream).events;
    size_t checked = 0;
    for (size_t i = 0; i < k.size(); ++i) {
        const auto flows = LaunchFlows::of(t, EventRef { stream, uint32_t(i) });
        QCOMPARE(flows.size(), size_t(1));
        QCOMPARE(flows[0].launch.lane, api);
        QCOMPARE(flows[0].gpu.index, uint32_t(i));
        QVERIFY(k.correlation(i) != 0);
        QCOMPARE(t.lane(api).events.correlation(flows[0].launch.index), k.correlation(i));
        ++checked;
    }
    QCOMPARE(checked, size_t(4 * 24));
    // From the launch: its one kernel, same correlation id.
    const LaneEvents& a = t.lane(api).events;
    size_t launches = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        if (t.str(a.name(i)) != "cudaLaunchKernel")
            continue;
        const auto flows = LaunchFlows::of(t, EventRef { api, uint32_t(i) });
        QCOMPARE(flows.size(), size_t(1));
        QCOMPARE(flows[0].gpu.lane, stream);
        QCOMPARE(k.correlation(flows[0].gpu.index), a.correlation(i));
        ++launches;
    }
    QCOMPARE(launches, size_t(4 * 24));
    // Both ends are on screen once rank 0's CPU threads are open.
    TimelineWidget* tl = m_ws->timeline();
    const auto flows = LaunchFlows::of(t, EventRef { stream, 5 });
    QVERIFY(!tl->renderer().eventRect(flows[0].launch, tl->view()).isEmpty());
    QVERIFY(!tl->renderer().eventRect(flows[0].gpu, tl->view()).isEmpty());
}

void TstHostView::detailsNameTheLaunchingOp()
{
    const Trace& t = *m_doc->trace;
    const LaneId stream = lanesOf(LaneKind::GpuStream, 0)[0];
    const LaneId thread = lanesOf(LaneKind::CpuThread, 0)[0];
    for (uint32_t i : { 0u, 7u, 23u }) {
        const EventRef launch = t.launchOf(stream, i);
        QVERIFY(launch.valid());
        const LaneEvents& a = t.lane(launch.lane).events;
        // Read straight off the CPU lane: the deepest range around the call, and the outermost.
        const LaneEvents& h = t.lane(thread).events;
        std::string op, frame;
        uint32_t best = 0;
        for (size_t j = 0; j < h.size(); ++j) {
            if (h.start(j) > a.start(launch.index) || h.end(j) < a.end(launch.index))
                continue;
            if (t.hostKind(thread, j) == HostKind::CpuOp && (op.empty() || t.hostDepth(thread, j) > best)) {
                op = std::string(t.str(h.name(j)));
                best = t.hostDepth(thread, j);
            }
            if (t.hostDepth(thread, j) == 0)
                frame = std::string(t.str(h.name(j)));
        }
        QVERIFY(op.rfind("aten::", 0) == 0);
        QCOMPARE(frame, std::string("model.forward"));
        const QString html = m_ws->detailsPane()->eventHtml(EventRef { stream, i });
        const int at = html.indexOf(QStringLiteral("launching op"));
        QVERIFY(at >= 0);
        QVERIFY2(html.indexOf(QString::fromStdString(op), at) > at, qPrintable(html));
        const int stack = html.indexOf(QStringLiteral("host stack"));
        QVERIFY(stack > at);
        // Innermost first: the operator before the Python frame around it.
        const int opAt = html.indexOf(QString::fromStdString(op), stack);
        const int frameAt = html.indexOf(QStringLiteral("model.forward"), stack);
        QVERIFY(opAt > stack && frameAt > opAt);
        QVERIFY(html.indexOf(QStringLiteral("cpu_op"), stack) > stack);
    }
}

void TstHostView::hostTableEqualsTruth()
{
    HostTableModel* model = m_ws->statsPanel()->hostModel();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(model->rowCount() > 0);
    const json::Value& ranks = m_truth["ranks"];
    QCOMPARE(ranks.size(), size_t(2));
    for (const json::Value& rank : ranks.items()) {
        const uint32_t r = uint32_t(rank["rank"].toInt());
        std::map<std::pair<std::string, std::string>, std::pair<TimeNs, uint64_t>> truth;
        TimeNs gap = 0, explained = 0;
        for (const json::Value& step : rank["steps"].items()) {
            const json::Value& h = step["host"];
            gap += h["launch_host_ns"].toInt();
            explained += h["explained_ns"].toInt();
            for (const json::Value& e : h["events"].items()) {
                auto& v = truth[{ e["name"].toString(), e["kind"].toString() }];
                v.first += e["ns"].toInt();
                v.second += uint64_t(e["count"].toInt());
            }
        }
        QVERIFY(truth.count({ "synth::host_delay", "cpu_op" }));
        size_t rows = 0;
        TimeNs unattributed = 0;
        for (const HostTableModel::Row& row : model->rows()) {
            if (row.rank != r || row.gap != IdleKind::LaunchHost)
                continue;
            if (row.name == 0) { // the unattributed time, by why
                unattributed += row.ns;
                continue;
            }
            QVERIFY2(!row.event.startsWith(QLatin1String("other thread:")), "synth runs one thread per rank");
            const auto key = std::make_pair(row.event.toStdString(), row.kind.toStdString());
            QVERIFY2(truth.count(key), qPrintable(row.event));
            QCOMPARE(row.ns, truth[key].first);
            QCOMPARE(row.count, truth[key].second);
            QVERIFY(!row.gaps.empty());
            QVERIFY(std::abs(row.share - double(row.ns) / double(gap)) < 1e-12);
            ++rows;
        }
        QCOMPARE(rows, truth.size());
        QCOMPARE(unattributed, gap - explained);
    }
    // The first row of rank 0 is the injected op (the most gap time), shown with its kind and share.
    const int first = 0;
    QCOMPARE(
        model->data(model->index(first, HostTableModel::HostEvent)).toString(), QStringLiteral("synth::host_delay"));
    QCOMPARE(model->data(model->index(first, HostTableModel::Kind)).toString(), QStringLiteral("cpu_op"));
    QVERIFY(model->data(model->index(first, HostTableModel::Share)).toString().endsWith(QLatin1Char('%')));
    // The table is a tab of the stats panel with the CSV export of the other tables.
    StatsTable* table = m_ws->statsPanel()->hostTable();
    QVERIFY(m_ws->statsPanel()->tabs()->indexOf(table) >= 0);
    const QString csv = table->csv(false);
    const QString header = csv.section(QLatin1Char('\n'), 0, 0);
    QVERIFY2(header.contains(QStringLiteral("host event")) && header.contains(QStringLiteral("share of gap")),
        qPrintable(header));
    QVERIFY(csv.contains(QStringLiteral("synth::host_delay")));
}

void TstHostView::hostRowLightsItsGaps()
{
    HostTableModel* model = m_ws->statsPanel()->hostModel();
    int target = -1;
    for (int i = 0; i < model->rowCount(); ++i)
        if (model->row(i)->rank == 1 && model->row(i)->event == QLatin1String("synth::host_delay"))
            target = i;
    QVERIFY(target >= 0);
    const HostTableModel::Row row = *model->row(target);
    StatsTable* table = m_ws->statsPanel()->hostTable();
    m_ws->statsPanel()->tabs()->setCurrentWidget(table);
    const QModelIndex at = table->proxy()->mapFromSource(model->index(target, HostTableModel::HostEvent));
    table->view()->scrollTo(at);
    QTest::mouseClick(table->view()->viewport(), Qt::LeftButton, {}, table->view()->visualRect(at).center());
    const TimelineHighlight& h = m_ws->timeline()->highlight();
    QCOMPARE(h.label, QStringLiteral("synth::host_delay"));
    // Its gaps, and only those: the spans of rank 1, each a launch/host gap the attribution gave it.
    const HostAttribution* host = m_ws->analysis()->hostAttribution();
    QVERIFY(host);
    QCOMPARE(h.spanCount(), row.gaps.size());
    QVERIFY(h.spans.size() >= 2 && h.spans[0].empty());
    for (size_t i = 0; i < row.gaps.size(); ++i) {
        const HostAttribution::Gap& g = host->gaps()[row.gaps[i]];
        QCOMPARE(g.gap.rank, 1u);
        QCOMPARE(g.gap.kind, IdleKind::LaunchHost);
        QCOMPARE(h.spans[1][i].start, g.gap.start);
        QCOMPARE(h.spans[1][i].end, g.gap.end);
    }
    // On the flame: the synth::host_delay operators of rank 1's thread, and nothing else.
    const Trace& t = *m_doc->trace;
    size_t lit = 0;
    for (LaneId lane = 0; lane < h.events.size(); ++lane)
        for (uint32_t i : h.events[lane]) {
            QCOMPARE(t.lane(lane).info.rank, 1u);
            QCOMPARE(t.str(t.lane(lane).events.name(i)), std::string_view("synth::host_delay"));
            ++lit;
        }
    QVERIFY(lit > 0 && lit <= row.gaps.size()); // an injected op is behind one gap at most
    m_ws->timeline()->clearHighlight();
}

void TstHostView::barMembersNameTheirHostEvent()
{
    const auto& bars = m_ws->analysis()->bars();
    int bar = -1;
    for (size_t i = 0; i < bars.size(); ++i)
        if (bars[i].name == "launch/host gaps")
            bar = int(i);
    QVERIFY(bar >= 0);
    TimelineHighlight h;
    std::vector<BarMember> members;
    QVERIFY(m_ws->analysis()->membersNow(bar, h, members));
    QVERIFY(!members.empty());
    const HostAttribution* host = m_ws->analysis()->hostAttribution();
    MemberTableModel model;
    model.setMembers(m_doc->trace.get(), members, QStringLiteral("launch/host gap"));
    const Trace& t = *m_doc->trace;
    size_t named = 0;
    for (int i = 0; i < int(members.size()); ++i) {
        const BarMember& m = members[size_t(i)];
        // The gap of the attribution that starts where the member does names the same host event.
        const HostAttribution::Gap* g = nullptr;
        for (const auto& x : host->gaps())
            if (x.gap.rank == m.rank && x.gap.start == m.start && x.gap.kind == IdleKind::LaunchHost)
                g = &x;
        QVERIFY(g);
        QCOMPARE(m.host.lane, g->host.lane);
        QCOMPARE(m.host.index, g->host.index);
        const QString text = model.data(model.index(i, MemberTableModel::Host)).toString();
        if (!m.host.valid()) {
            QVERIFY(text.isEmpty());
            continue;
        }
        const QString name = QString::fromStdString(std::string(t.str(t.lane(m.host.lane).events.name(m.host.index))));
        QVERIFY2(text.startsWith(name + QStringLiteral(" (")), qPrintable(text));
        ++named;
    }
    QVERIFY(named > 0);
}

void TstHostView::syncStallsNameTheirCall()
{
    // synth: per step a blocking copy then cudaStreamSynchronize while the GPU idles, inside the step's
    // model.forward frame (step-level, so left out): the Host table's sync rows are that call, with
    // the figures of `analyze --json`'s host_syncs.
    const QString cli = QStringLiteral(GAPSCOPE_BINARY_DIR "/app/gapscope-cli");
    // The build makes gapscope-cli before this test (add_dependencies): missing is a failure.
    QVERIFY2(QFile::exists(cli), qPrintable(cli + QStringLiteral(" is missing")));
    SynthOptions o;
    o.ranks = 2;
    o.steps = 3;
    o.kernelsPerStep = 16;
    o.graphMode = false;
    o.hostOps = true;
    o.syncStallUs = 80;
    json::Value truth;
    auto trace = synthesize(o, &truth);
    QVERIFY(trace);
    const QString path = m_tmp.filePath(QStringLiteral("sync.gapscope"));
    QVERIFY(writeTraceFile(*trace, path.toStdString()));
    auto doc = TraceDocument::fromTrace(std::move(*trace), path);
    Workspace ws;
    ws.analysis()->setAsync(false);
    ws.setDocument(doc);
    ws.analysis()->runNow();
    QProcess p;
    p.start(cli, { QStringLiteral("analyze"), QStringLiteral("--json"), path });
    QVERIFY(p.waitForFinished(120'000));
    const QJsonArray syncs
        = QJsonDocument::fromJson(p.readAllStandardOutput()).object().value(QStringLiteral("host_syncs")).toArray();
    QCOMPARE(syncs.size(), 2);
    HostTableModel* model = ws.statsPanel()->hostModel();
    for (const QJsonValue& v : syncs) {
        const uint32_t r = uint32_t(v[QStringLiteral("rank")].toInt());
        std::vector<const HostTableModel::Row*> mine;
        for (const HostTableModel::Row& row : model->rows())
            if (row.rank == r && row.gap == IdleKind::SyncStall)
                mine.push_back(&row);
        const QJsonArray top = v[QStringLiteral("top")].toArray();
        QCOMPARE(qsizetype(mine.size()), top.size());
        TimeNs shown = 0;
        for (int i = 0; i < top.size(); ++i) {
            const QJsonObject e = top[i].toObject();
            QVERIFY(mine[size_t(i)]->event.startsWith(e[QStringLiteral("call")].toString()));
            QCOMPARE(e[QStringLiteral("call")].toString(), QStringLiteral("cudaStreamSynchronize"));
            QCOMPARE(qint64(mine[size_t(i)]->count), qint64(e[QStringLiteral("count")].toInteger()));
            QCOMPARE(std::llround(e[QStringLiteral("ms")].toDouble() * 1e6), qint64(mine[size_t(i)]->ns));
            shown += mine[size_t(i)]->ns;
        }
        // Near synth's own figure (the stall it injected per step).
        TimeNs stall = 0;
        for (const json::Value& step : truth["ranks"].at(r)["steps"].items())
            stall += step["sync_stall_ns"].toInt();
        QVERIFY2(std::abs(double(shown - stall)) < 0.1 * double(stall), qPrintable(QString::number(shown)));
    }
    // The sync stall bar's members name the blocking call.
    const auto& bars = ws.analysis()->bars();
    int bar = -1;
    for (size_t i = 0; i < bars.size(); ++i)
        if (bars[i].name == "sync stalls")
            bar = int(i);
    QVERIFY(bar >= 0);
    TimelineHighlight h;
    std::vector<BarMember> members;
    QVERIFY(ws.analysis()->membersNow(bar, h, members));
    QVERIFY(!members.empty());
    MemberTableModel table;
    table.setMembers(doc->trace.get(), members, QStringLiteral("sync stall"));
    for (int i = 0; i < table.rowCount(); ++i)
        QVERIFY(table.data(table.index(i, MemberTableModel::Host))
                    .toString()
                    .startsWith(QStringLiteral("cudaStreamSynchronize")));
}

void TstHostView::headlessExportShowsCpuLanes()
{
    const QString exe = QStringLiteral(GAPSCOPE_BINARY_DIR "/app/gapscope");
    // The build makes the viewer before this test (add_dependencies): missing is a failure.
    QVERIFY2(QFile::exists(exe), qPrintable(exe + QStringLiteral(" is missing")));
    // Pixels of a host-range colour (any shade of cpu_op or Python) in the picture.
    std::set<QRgb> shades;
    for (StringId id = 0; id < m_doc->trace->stringCount(); ++id)
        for (HostKind k : { HostKind::CpuOp, HostKind::Python })
            shades.insert(EventColors::hostColor(k, id) & 0xffffff);
    auto hostPixels = [&](const QStringList& args) {
        const QString out = m_tmp.filePath(QStringLiteral("cpu-%1.png").arg(args.join(QLatin1Char('-'))));
        QProcess p;
        p.start(exe,
            QStringList { m_path, QStringLiteral("--export-png"), out, QStringLiteral("--size"),
                QStringLiteral("1600x900"), QStringLiteral("--step"), QStringLiteral("1") }
                + args);
        if (!p.waitForFinished(120'000) || p.exitCode() != 0)
            qFatal("export failed: %s", p.readAllStandardError().constData());
        const QImage img = QImage(out).convertToFormat(QImage::Format_RGB32);
        size_t n = 0;
        for (int y = 0; y < img.height(); ++y)
            for (int x = 0; x < img.width(); ++x)
                n += shades.count(img.pixel(x, y) & 0xffffff);
        return n;
    };
    const size_t byDefault = hostPixels({});
    const size_t none = hostPixels({ QStringLiteral("--cpu-lanes"), QStringLiteral("none") });
    const size_t all = hostPixels({ QStringLiteral("--cpu-lanes"), QStringLiteral("all") });
    QCOMPARE(none, size_t(0));
    QVERIFY2(byDefault > 2000, qPrintable(QString::number(byDefault))); // the first rank's flame
    QVERIFY(all > byDefault); // and the second's
    QProcess bad;
    bad.start(exe,
        { m_path, QStringLiteral("--export-png"), m_tmp.filePath(QStringLiteral("x.png")),
            QStringLiteral("--cpu-lanes"), QStringLiteral("some") });
    QVERIFY(bad.waitForFinished(60'000));
    QCOMPARE(bad.exitCode(), 2);
}

void TstHostView::realKinetoTrace()
{
    const QString file = QStringLiteral(GAPSCOPE_SOURCE_DIR "/../shared/corpus/kineto/hta_alexnet.json.gz");
    const QString cli = QStringLiteral(GAPSCOPE_BINARY_DIR "/app/gapscope-cli");
    if (!QFile::exists(file))
        QSKIP("no corpus here: ../shared/corpus/kineto/hta_alexnet.json.gz is not next to the source tree");
    QVERIFY2(QFile::exists(cli), qPrintable(cli + QStringLiteral(" is missing")));
    QString error;
    // Its steps are PARAM's "[param|...|forward]" benchmark iterations: only a named rule makes them steps.
    const QString rule = QStringLiteral("nvtx:forward\\]$");
    auto doc = TraceDocument::open({ file }, &error, rule);
    QVERIFY2(doc, qPrintable(error));
    QCOMPARE(doc->trace->stepCount(), 2u);
    Workspace ws;
    ws.analysis()->setAsync(false);
    ws.resize(1400, 800);
    ws.setDocument(doc);
    ws.analysis()->runNow();
    const Trace& t = *doc->trace;
    // A CPU thread group under the GPU rows, closed; its flame as deep as the deepest operator.
    const uint32_t rank = t.ranks().front();
    const LaneLayout& layout = ws.timeline()->laneLayout();
    QVERIFY(layout.rowOfCpuGroup(rank) > layout.rowOfRank(rank));
    LaneLayoutOptions o = ws.timeline()->layoutOptions();
    o.openCpuRanks = { rank };
    ws.timeline()->setLayoutOptions(o);
    for (const Lane& l : t.lanes()) {
        if (l.info.kind != LaneKind::CpuThread || l.events.empty())
            continue;
        uint32_t deepest = 0;
        for (size_t i = 0; i < l.events.size(); ++i)
            deepest = std::max(deepest, t.hostDepth(l.id, i));
        const int r = ws.timeline()->laneLayout().rowOfLane(l.id);
        QVERIFY(r >= 0);
        QCOMPARE(ws.timeline()->laneLayout().rows()[size_t(r)].levels,
            std::min(int(deepest) + 1, ws.timeline()->layoutOptions().maxHostDepth));
    }
    // The Host table's launch/host rows are `analyze --json`'s host_gaps top entries, in order.
    QProcess p;
    p.start(cli, { QStringLiteral("analyze"), QStringLiteral("--json"), QStringLiteral("--step-rule"), rule, file });
    QVERIFY(p.waitForFinished(120'000));
    const QJsonDocument json = QJsonDocument::fromJson(p.readAllStandardOutput());
    const QJsonArray gaps = json.object().value(QStringLiteral("host_gaps")).toArray();
    QVERIFY(!gaps.isEmpty());
    HostTableModel* model = ws.statsPanel()->hostModel();
    for (const QJsonValue& v : gaps) {
        const uint32_t r = uint32_t(v[QStringLiteral("rank")].toInt());
        std::vector<const HostTableModel::Row*> mine;
        for (const HostTableModel::Row& row : model->rows())
            if (row.rank == r && row.gap == IdleKind::LaunchHost && row.name != 0)
                mine.push_back(&row);
        const QJsonArray top = v[QStringLiteral("top")].toArray();
        QVERIFY(!top.isEmpty());
        QVERIFY(mine.size() >= size_t(top.size()));
        for (int i = 0; i < top.size(); ++i) {
            const QJsonObject e = top[i].toObject();
            QCOMPARE(mine[size_t(i)]->event, e[QStringLiteral("name")].toString());
            QCOMPARE(mine[size_t(i)]->kind, e[QStringLiteral("kind")].toString());
            QCOMPARE(qint64(mine[size_t(i)]->count), qint64(e[QStringLiteral("count")].toInteger()));
            QVERIFY(std::abs(double(mine[size_t(i)]->ns) / 1e6 - e[QStringLiteral("ms")].toDouble()) < 1e-3);
        }
    }
    // A kernel's details name the innermost cpu_op around its launch, read straight off the lanes.
    size_t named = 0;
    for (const Lane& l : t.lanes()) {
        if (l.info.kind != LaneKind::GpuStream || named >= 5)
            continue;
        for (size_t i = 0; i < l.events.size() && named < 5; i += 7) {
            const EventRef launch = t.launchOf(l.id, i);
            if (!launch.valid())
                continue;
            const LaneInfo& thread = t.lane(launch.lane).info;
            const LaneEvents& a = t.lane(launch.lane).events;
            std::string op;
            TimeNs opStart = INT64_MIN;
            for (const Lane& c : t.lanes()) {
                if (c.info.kind != LaneKind::CpuThread || c.info.rank != thread.rank || c.info.stream != thread.stream)
                    continue;
                for (size_t j = 0; j < c.events.size(); ++j)
                    if (c.events.start(j) <= a.start(launch.index) && c.events.end(j) >= a.end(launch.index)
                        && t.hostKind(c.id, j) == HostKind::CpuOp && c.events.start(j) >= opStart) {
                        op = std::string(t.str(c.events.name(j)));
                        opStart = c.events.start(j);
                    }
            }
            if (op.empty())
                continue;
            const QString html = ws.detailsPane()->eventHtml(EventRef { l.id, uint32_t(i) });
            const int at = html.indexOf(QStringLiteral("launching op"));
            QVERIFY(at >= 0);
            QVERIFY2(html.indexOf(QString::fromStdString(op).toHtmlEscaped(), at) > at, qPrintable(html));
            ++named;
        }
    }
    QCOMPARE(named, size_t(5));
}

QTEST_MAIN(TstHostView)
#include "tst_hostview.moc"
