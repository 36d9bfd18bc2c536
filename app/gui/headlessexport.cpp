// SPDX-License-Identifier: MIT
#include "app/gui/headlessexport.h"

#include "views/analysis/analysisrunner.h"
#include "views/analysis/budgetpanel.h"
#include "views/analysis/waterfallpanel.h"
#include "views/document/tracedocument.h"
#include "views/document/workspace.h"
#include "views/tables/statspanel.h"
#include "views/tables/steptablemodel.h"
#include "views/timeline/timelinewidget.h"

#include <QRegularExpression>

#include <cstdio>

using namespace gapscope::model;

namespace headlessexport {

std::optional<QSize> parseSize(const QString& text)
{
    static const QRegularExpression re(QStringLiteral("^(\\d{2,5})[xX](\\d{2,5})$"));
    const auto m = re.match(text.trimmed());
    if (!m.hasMatch())
        return std::nullopt;
    return QSize(m.captured(1).toInt(), m.captured(2).toInt());
}

std::optional<qint64> parseTime(const QString& text)
{
    static const QRegularExpression re(QStringLiteral("^([0-9]*\\.?[0-9]+)\\s*(ns|us|ms|s)?$"));
    const auto m = re.match(text.trimmed());
    if (!m.hasMatch())
        return std::nullopt;
    const double v = m.captured(1).toDouble();
    const QString unit = m.captured(2);
    const double scale = unit == QLatin1String("ns") ? 1
        : unit == QLatin1String("us")                ? 1e3
        : unit == QLatin1String("s")                 ? 1e9
                                                     : 1e6;
    return qint64(v * scale);
}

std::optional<std::set<uint32_t>> parseCpuLanes(const QString& text, const std::vector<uint32_t>& withThreads)
{
    const QString t = text.trimmed().toLower();
    if (t == QLatin1String("none"))
        return std::set<uint32_t> {};
    if (t == QLatin1String("first") || t.isEmpty())
        return withThreads.empty() ? std::set<uint32_t> {} : std::set<uint32_t> { withThreads.front() };
    if (t == QLatin1String("all"))
        return std::set<uint32_t>(withThreads.begin(), withThreads.end());
    std::set<uint32_t> out;
    for (const QString& part : t.split(QLatin1Char(','))) {
        bool ok = false;
        const uint rank = part.trimmed().toUInt(&ok);
        if (!ok)
            return std::nullopt;
        out.insert(uint32_t(rank));
    }
    return out;
}

static int fail(const QString& message, int code = 3)
{
    std::fprintf(stderr, "gapscope: %s\n", qPrintable(message));
    return code;
}

static bool applyBudgetOptions(const HeadlessOptions& o, BudgetPanel& budget)
{
    if (!o.model.isEmpty())
        budget.setModel(o.model);
    if (!o.hardware.isEmpty())
        budget.setHardware(o.hardware);
    if (!o.precision.isEmpty())
        budget.setPrecisionSpec(o.precision);
    if (o.tp > 0)
        budget.setParallelism(o.tp, 1);
    return budget.recompute();
}

int run(const HeadlessOptions& o)
{
    if (o.files.isEmpty())
        return fail(QStringLiteral("--export-png/--export-svg/--export-html need a trace file"), 2);
    QString error;
    auto doc = TraceDocument::open(o.files, &error);
    if (!doc)
        return fail(error);
    Workspace ws;
    ws.analysis()->setAsync(false);
    ws.resize(o.size);
    ws.setDocument(doc);
    if (!applyBudgetOptions(o, *ws.budgetPanel())
        && (!o.model.isEmpty() || !o.hardware.isEmpty() || !o.precision.isEmpty()))
        return fail(QStringLiteral("budget: %1").arg(ws.budgetPanel()->error()), 2);
    WaterfallRequest request;
    request.rank = o.rank >= 0 ? o.rank : GapAnalyzer::kCriticalRank;
    const Trace& trace = *doc->trace;
    std::set<uint32_t> threaded;
    for (const Lane& l : trace.lanes())
        if (l.info.kind == LaneKind::CpuThread && !l.events.empty())
            threaded.insert(l.info.rank);
    const auto open = parseCpuLanes(o.cpuLanes, std::vector<uint32_t>(threaded.begin(), threaded.end()));
    if (!open)
        return fail(QStringLiteral("--cpu-lanes %1: expected first, all, none or ranks like 0,2").arg(o.cpuLanes), 2);
    LaneLayoutOptions lanes = ws.timeline()->layoutOptions();
    lanes.openCpuRanks = *open;
    ws.timeline()->setLayoutOptions(lanes);
    if (!o.range.isEmpty()) {
        const QStringList parts = o.range.split(QLatin1Char(':'));
        const auto a = parts.size() == 2 ? parseTime(parts[0]) : std::nullopt;
        const auto b = parts.size() == 2 ? parseTime(parts[1]) : std::nullopt;
        if (!a || !b || *b <= *a)
            return fail(QStringLiteral("--range %1: expected A:B with A < B, e.g. 12ms:15.5ms").arg(o.range), 2);
        request.kind = WaterfallRequest::Kind::Range;
        request.t0 = ws.timeline()->extentStart() + *a;
        request.t1 = ws.timeline()->extentStart() + *b;
        ws.timeline()->zoomToRange(request.t0, request.t1, 0);
        ws.readWindowNow(); // a large file: the events of that range
    } else if (o.step >= 0) {
        const bool known = doc->large() ? o.step < int(doc->overview->stepCount())
                                        : ws.statsPanel()->stepModel()->rowOfStep(uint32_t(o.step)) >= 0;
        if (!known)
            return fail(QStringLiteral("--step %1: the trace has no such decode step").arg(o.step), 2);
        request.kind = WaterfallRequest::Kind::Step;
        request.firstStep = request.lastStep = uint32_t(o.step);
        ws.showStep(uint32_t(o.step));
        ws.readWindowNow();
    }
    ws.waterfallPanel()->setRequest(request);
    ws.analysis()->setRequest(request);
    ws.analysis()->runNow();
    const std::pair<QString, bool> outputs[] = { { o.png, false }, { o.svg, true } };
    if (!o.html.isEmpty()) {
        const QString err = ws.exportHtml(o.html);
        if (!err.isEmpty())
            return fail(err);
        std::printf("wrote %s\n", qPrintable(o.html));
    }
    for (const auto& [out, svg] : outputs) {
        if (out.isEmpty())
            continue;
        const QString err = ws.exportImage(out, o.size, svg);
        if (!err.isEmpty())
            return fail(err);
        std::printf("wrote %s (%dx%d)\n", qPrintable(out), o.size.width(), o.size.height());
    }
    return 0;
}

} // namespace headlessexport
