// SPDX-License-Identifier: MIT
#include "views/document/workspace.h"

#include "model/export/exportrules.h"
#include "model/export/perfettoexport.h"
#include "model/trace/tracesummary.h"

#include "model/export/htmlreport.h"
#include "model/trace/tracesummary.h"
#include "views/analysis/analysisrunner.h"
#include "views/analysis/budgetpanel.h"
#include "views/analysis/budgetprompt.h"
#include "views/analysis/budgetstore.h"
#include "views/analysis/findingspanel.h"
#include "views/analysis/querypanel.h"
#include "views/analysis/waterfallchart.h"
#include "views/analysis/waterfallpanel.h"
#include "views/annotations/annotationdialog.h"
#include "views/annotations/annotationmodel.h"
#include "views/annotations/annotationpanel.h"
#include "views/annotations/annotationstore.h"
#include "views/common/timeformat.h"
#include "views/tables/hosttablemodel.h"
#include "views/tables/statspanel.h"
#include "views/tables/steptablemodel.h"
#include "views/timeline/detailspane.h"
#include "views/timeline/searchbar.h"
#include "views/timeline/timelinewidget.h"

#include <QApplication>
#include <QFile>
#include <QFileInfo>
#include <QLineEdit>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>

using namespace gapscope::model;

Workspace::Workspace(QWidget* parent)
    : QWidget(parent)
    , m_timeline(new TimelineWidget)
    , m_search(new SearchBar(m_timeline))
    , m_waterfall(new WaterfallPanel)
    , m_stats(new StatsPanel)
    , m_findings(new FindingsPanel)
    , m_details(new DetailsPane)
    , m_budget(new BudgetPanel)
    , m_annotations(new AnnotationModel(this))
    , m_annotationPanel(new AnnotationPanel(m_annotations))
    , m_query(new QueryPanel)
    , m_analysis(new AnalysisRunner(this))
    , m_outer(new QSplitter(Qt::Vertical))
    , m_top(new QSplitter(Qt::Horizontal))
{
    auto* timelineBox = new QWidget;
    auto* tl = new QVBoxLayout(timelineBox);
    tl->setContentsMargins(0, 0, 0, 0);
    tl->setSpacing(0);
    tl->addWidget(m_search);
    tl->addWidget(m_timeline, 1);
    m_search->hide();
    m_top->addWidget(timelineBox);
    m_top->addWidget(m_waterfall);
    m_top->setStretchFactor(0, 3);
    m_top->setStretchFactor(1, 1);
    m_outer->addWidget(m_top);
    m_stats->tabs()->insertTab(0, m_findings, tr("Findings"));
    m_stats->tabs()->setCurrentIndex(0);
    m_outer->addWidget(m_stats);
    m_outer->setStretchFactor(0, 3);
    m_outer->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_outer);
    m_timeline->setAnnotations(&m_annotations->annotations());
    connectTimeline();
    connectPanels();
}

Workspace::~Workspace()
{
    // The panels that were never docked anywhere still belong to us.
    for (QWidget* w : { static_cast<QWidget*>(m_details), static_cast<QWidget*>(m_budget),
             static_cast<QWidget*>(m_annotationPanel) }) {
        if (!w->parent())
            delete w;
    }
}

void Workspace::connectTimeline()
{
    connect(m_timeline, &TimelineWidget::windowWanted, this, &Workspace::readWindow);
    connect(m_timeline, &TimelineWidget::eventSelected, m_details, &DetailsPane::showDetails);
    connect(m_details, &DetailsPane::eventActivated, this, [this](EventRef ev) { m_timeline->selectEvent(ev, true); });
    connect(m_timeline, &TimelineWidget::rangeSelected, this, [this](TimeNs t0, TimeNs t1) {
        m_details->showRange(t0, t1, m_timeline->laneLayout());
        m_stats->setRange(t0, t1);
        m_waterfall->setSelectedRange(t0, t1);
    });
    connect(m_timeline, &TimelineWidget::selectionCleared, this, [this] { m_stats->clearRange(); });
    connect(m_timeline, &TimelineWidget::highlightCleared, this, [this] {
        m_selectedBar = -1;
        m_waterfall->chart()->setSelectedBar(-1);
    });
    connect(m_timeline, &TimelineWidget::annotateRequested, this,
        [this](TimeNs t0, TimeNs t1, const QString& lane) { addAnnotation(t0, t1, lane, QString()); });
    connect(m_timeline, &TimelineWidget::annotationActivated, this, &Workspace::editAnnotation);
    connect(m_timeline, &TimelineWidget::annotationMoved, this,
        [this](int row, TimeNs delta) { m_annotations->move(row, delta); });
    connect(m_annotations, &AnnotationModel::changed, m_timeline, qOverload<>(&QWidget::update));
}

void Workspace::connectPanels()
{
    connect(m_budget, &BudgetPanel::budgetChanged, this, &Workspace::applyBudget);
    connect(m_waterfall->budgetPrompt(), &BudgetPrompt::chosen, this, &Workspace::chooseBudget);
    connect(m_waterfall, &WaterfallPanel::budgetColumnChanged, this, &Workspace::applyBudget);
    connect(
        m_waterfall, &WaterfallPanel::requestChanged, this, [this] { m_analysis->setRequest(m_waterfall->request()); });
    connect(m_waterfall, &WaterfallPanel::stepKindChanged, m_analysis, &AnalysisRunner::setStepKind);
    connect(m_analysis, &AnalysisRunner::waterfallReady, this, [this](const WaterfallData& d) {
        m_waterfall->setData(d);
        m_selectedBar = -1;
    });
    connect(m_analysis, &AnalysisRunner::busyChanged, this,
        [this](bool busy) { m_waterfall->setStatus(busy ? tr("Analysing the trace…") : QString()); });
    connect(m_analysis, &AnalysisRunner::analyzerReady, this, [this] {
        if (const GapAnalyzer* a = m_analysis->analyzer()) {
            QStringList notes;
            for (const auto& n : a->notes())
                notes << QString::fromStdString(n);
            // The capture's own cost where the trace recorded it, so it is not read as a gap.
            for (uint32_t r : a->ranks())
                if (const gapscope::model::OverheadEvidence* e = captureOverhead(a->trace(), r))
                    notes << tr("Capture overhead on rank %1: %2; the tool's own cost is inside the bars.")
                                 .arg(r)
                                 .arg(QString::fromStdString(gapscope::model::captureOverheadLine(*e, false)));
            m_waterfall->setStatus(QString());
            m_waterfall->setCoverage(m_analysis->coverage(), notes);
            // What the answer does not cover first (coverage items not ok), then the findings, then the notes
            // (data problems, the capture's own cost) as rows of their own.
            std::vector<Finding> rows;
            for (const auto& c : m_analysis->coverage()) {
                if (c.verdict == gapscope::model::CoverageVerdict::Ok)
                    continue;
                Finding f;
                f.text = "coverage " + std::string(toString(c.verdict)) + ": " + c.name + ": " + c.meaning;
                f.kind = "coverage";
                rows.push_back(std::move(f));
            }
            rows.insert(rows.end(), m_analysis->findings().begin(), m_analysis->findings().end());
            for (const QString& n : notes) {
                Finding note;
                note.text = n.toStdString();
                note.kind = "note";
                rows.push_back(std::move(note));
            }
            m_findings->setFindings(std::move(rows));
            m_stats->setHostAttribution(m_analysis->hostAttribution());
            m_stats->tabs()->setCurrentWidget(m_findings);
            // The query dock reads the trace analysed, with the same classifier, budget and kind of step.
            const QString scope = m_doc && m_doc->large()
                ? tr("the window of the file read now: %n step(s)", nullptr, int(a->trace().stepCount()))
                : QString();
            m_query->setTrace(
                m_analysis->trace(), a->classifier(), m_analysis->stepBudget(), m_analysis->stepKind(), scope);
        }
    });
    connect(m_findings, &FindingsPanel::findingActivated, this, &Workspace::showFinding);
    connect(m_query, &QueryPanel::highlightRequested, this, [this](const TimelineHighlight& h, TimeNs t0, TimeNs t1) {
        m_timeline->setHighlight(h);
        m_timeline->zoomToRange(t0, t1, 0.2);
    });
    connect(m_waterfall->chart(), &WaterfallChart::barClicked, this, &Workspace::selectBar);
    connect(m_analysis, &AnalysisRunner::membersReady, this, &Workspace::onMembers);
    connect(m_stats, &StatsPanel::stepActivated, this, &Workspace::showStep);
    connect(m_stats, &StatsPanel::stepsSelected, m_waterfall, &WaterfallPanel::setSelectedSteps);
    connect(m_stats, &StatsPanel::stepsSelected, this,
        [this](uint32_t first, uint32_t last) { m_selectedSteps = std::make_pair(first, last); });
    connect(m_stats, &StatsPanel::memberActivated, this, [this](const BarMember& m) {
        if (m.event.valid())
            m_timeline->selectEvent(m.event, true);
        else
            m_timeline->zoomToRange(m.start, m.end, 0.3);
    });
    connect(m_stats, &StatsPanel::hostRowSelected, this, &Workspace::selectHostRow);
    connect(m_stats, &StatsPanel::kernelActivated, this, [this](const QString& name) {
        m_search->activate();
        m_search->field()->setText(name);
        m_search->next();
    });
    connect(m_annotationPanel, &AnnotationPanel::jumpRequested, this, &Workspace::jumpToAnnotation);
    connect(m_annotationPanel, &AnnotationPanel::editRequested, this, &Workspace::editAnnotation);
    connect(m_annotationPanel, &AnnotationPanel::deleteRequested, m_annotations, &AnnotationModel::remove);
    connect(m_annotationPanel, &AnnotationPanel::saveRequested, this, [this] {
        QString where;
        const QString err = saveAnnotations(&where);
        emit statusMessage(err.isEmpty() ? tr("Annotations saved to %1").arg(where) : err);
    });
}

void Workspace::setDocument(std::shared_ptr<const TraceDocument> doc)
{
    m_doc = std::move(doc);
    m_windowJobs.cancel();
    m_readingWindow = false;
    const Trace* trace = m_doc ? m_doc->trace.get() : nullptr;
    m_selectedBar = -1;
    m_timeline->setTrace(m_doc ? m_doc->trace : nullptr, m_doc ? m_doc->colors : nullptr);
    if (m_doc && m_doc->large())
        m_timeline->setOverview(m_doc->overview, m_doc->window);
    m_timeline->setAnnotations(&m_annotations->annotations()); // the notes as edited, not the file's
    m_details->setTrace(trace, m_doc ? m_doc->colors.get() : nullptr);
    m_stats->setDocument(m_doc ? m_doc->trace : nullptr, m_doc ? m_doc->colors : nullptr);
    if (m_doc && m_doc->large()) { // times from the file's start, not the window's
        m_details->setTimeOrigin(m_doc->overview->startTime());
        m_stats->setTimeOrigin(m_doc->overview->startTime());
        if (!m_doc->overview->fromFrame())
            emit statusMessage(tr("This file was written before its format had an overview: it was built in a pass "
                                  "over every chunk. `gapscope-cli info --save-overview FILE` stores it in the file."));
    }
    if (m_doc && !m_doc->classifierError.isEmpty())
        emit statusMessage(m_doc->classifierError);
    loadAnnotations();
    m_analysis->setTrace(m_doc ? m_doc->trace : nullptr);
    if (!trace)
        return;
    std::vector<StepKind> kinds; // the kinds of step the trace has, to pick the one analysed
    const auto counts = stepKindCounts(*trace);
    for (size_t k = 0; k < kStepKinds; ++k)
        if (counts[k])
            kinds.push_back(StepKind(k));
    m_waterfall->setStepKinds(kinds, m_analysis->stepKind());
    uint32_t last = 0;
    for (uint32_t r : trace->ranks()) {
        if (!trace->steps(r).empty())
            last = std::max(last, trace->steps(r).back().index);
    }
    m_waterfall->setTraceInfo(trace->ranks(), 0, last);
    m_analysis->setRequest(m_waterfall->request());
    // The budget the user stored (sidecar, else the file's section); without one there is none: the
    // waterfall shows the measured breakdown and asks for a model and hardware.
    QString error;
    const QString path = m_doc->paths.isEmpty() ? QString() : m_doc->paths.first();
    auto stored = path.isEmpty() ? std::nullopt : budgetstore::loadSidecar(path, &error);
    if (!stored && trace->budgetSettings())
        stored = *trace->budgetSettings();
    const int ranks = int(std::max<size_t>(1, trace->ranks().size()));
    if (!stored || !m_budget->applySettings(*stored, &error))
        m_budget->prepareForTrace(m_doc->gpuName(), ranks);
    m_waterfall->budgetPrompt()->setTrace(m_doc->gpuName(), m_budget->hardwareFor(m_doc->gpuName()), ranks);
    if (!error.isEmpty())
        emit statusMessage(tr("The stored budget settings were not usable (%1): no budget").arg(error));
    applyBudget();
}

void Workspace::loadAnnotations()
{
    if (!m_doc || !m_doc->trace) {
        m_annotations->setAnnotations({}, 0);
        return;
    }
    const TimeNs origin = m_doc->large() ? m_doc->overview->startTime() : m_doc->trace->startTime();
    if (m_keptAnnotations && m_keptFor == m_doc->paths) { // opened again with a rule just chosen
        m_annotations->setAnnotations(*m_keptAnnotations, origin);
        m_annotations->setModified(true);
        m_keptAnnotations.reset();
        return;
    }
    m_keptAnnotations.reset();
    QString error;
    const QString path = m_doc->paths.isEmpty() ? QString() : m_doc->paths.first();
    auto sidecar = path.isEmpty() ? std::nullopt : annotationstore::loadSidecar(path, &error);
    m_annotations->setAnnotations(sidecar ? *sidecar : m_doc->trace->annotations(), origin);
    if (!error.isEmpty())
        emit statusMessage(error);
}

void Workspace::chooseStepRule(const QString& rule)
{
    if (!m_doc)
        return;
    m_annotations->setStepRule(rule.toStdString());
    m_keptAnnotations = m_annotations->annotations();
    m_keptFor = m_doc->paths;
}

void Workspace::chooseBudget(const QString& model, const QString& hardware)
{
    m_budget->setModel(model);
    m_budget->setHardware(hardware);
    if (!m_budget->recompute()) {
        emit statusMessage(tr("No budget from %1 on %2: %3").arg(model, hardware, m_budget->error()));
        return;
    }
    if (!m_doc || m_doc->paths.isEmpty() || m_liveRanks > 0)
        return;
    const gapscope::model::BudgetSettings settings = m_budget->toSettings();
    QString error;
    const QString path = m_doc->paths.first();
    switch (budgetstore::save(path, settings, &error)) {
    case budgetstore::SavedTo::TraceFile:
        emit statusMessage(tr("Budget stored in %1").arg(path));
        break;
    case budgetstore::SavedTo::Sidecar:
        emit statusMessage(tr("Budget stored in %1").arg(budgetstore::sidecarPath(path)));
        break;
    case budgetstore::SavedTo::None:
        emit statusMessage(tr("The budget could not be stored: %1").arg(error));
        break;
    }
}

void Workspace::applyBudget()
{
    const auto& b = m_budget->budget();
    m_waterfall->setBudgetPresent(b.has_value());
    m_analysis->setBudget(b ? std::optional<gapscope::model::BudgetInputs>(m_budget->inputs()) : std::nullopt,
        m_waterfall->achievable(),
        b ? m_budget->modelLabel() + QStringLiteral(" on ") + m_budget->hardwareLabel() : QString());
    if (b)
        m_stats->setBandwidthCeiling(m_budget->inputs().hardware.memoryBandwidthGbs);
}

void Workspace::selectBar(int bar)
{
    m_selectedBar = bar;
    m_waterfall->chart()->setSelectedBar(bar);
    m_analysis->requestMembers(bar);
    emit statusMessage(tr("Finding the kernels and gaps of this bar…"));
}

void Workspace::selectHostRow(int row)
{
    const HostTableModel::Row* r = m_stats->hostModel()->row(row);
    if (!r)
        return;
    m_selectedBar = -1;
    m_waterfall->chart()->setSelectedBar(-1);
    const TimelineHighlight h = r->wholeRank ? m_analysis->rankGapHighlight(r->rank, r->event)
                                             : m_analysis->hostHighlight(r->gaps, r->event, r->name);
    m_timeline->setHighlight(h);
    emit statusMessage(tr("%1 (rank %2): %3 gaps lit up (Esc clears)").arg(r->event).arg(r->rank).arg(h.spanCount()));
}

void Workspace::onMembers(int bar, const TimelineHighlight& highlight, const std::vector<BarMember>& list)
{
    if (bar != m_selectedBar)
        return;
    m_timeline->setHighlight(highlight);
    const auto& bars = m_analysis->waterfall().bars;
    const QString interval = bar >= 0 && size_t(bar) < bars.size()
        ? QString::fromLatin1(barInfo(bars[size_t(bar)].id).intervalName)
        : QString();
    m_stats->setMembers(highlight.label, interval, list);
    emit statusMessage(tr("%1: %2 kernels and %3 gaps lit up (Esc clears)")
                           .arg(highlight.label)
                           .arg(highlight.eventCount())
                           .arg(highlight.spanCount()));
}

void Workspace::showFinding(const Finding& f)
{
    if (f.t1 > f.t0) {
        m_timeline->zoomToRange(f.t0, f.t1, 3.0); // the gap with what is around it
        m_timeline->setSelection(f.t0, f.t1);
    } else if (f.step >= 0) {
        showStep(uint32_t(f.step));
    }
    if (f.rank >= 0 && m_doc && m_doc->trace) {
        const Trace& t = *m_doc->trace;
        for (LaneId lane = 0; lane < t.laneCount(); ++lane) {
            if (t.lane(lane).info.rank == uint32_t(f.rank) && t.lane(lane).info.kind == LaneKind::GpuStream) {
                m_timeline->scrollToLane(lane);
                break;
            }
        }
    }
    if (f.bar != BarId::None) {
        const auto& bars = m_analysis->waterfall().bars;
        for (size_t i = 0; i < bars.size(); ++i) {
            if (bars[i].id == f.bar && bars[i].slot == f.barSlot) {
                selectBar(int(i));
                break;
            }
        }
    }
}

void Workspace::showStep(uint32_t index)
{
    if (m_doc && m_doc->large()) { // any step of the file: its span over the ranks, then its window at once
        TimeNs t0 = INT64_MAX, t1 = INT64_MIN;
        for (uint32_t r : m_doc->overview->ranks())
            for (const Step& s : m_doc->overview->steps(r))
                if (s.index == index) {
                    t0 = std::min(t0, s.start);
                    t1 = std::max(t1, s.end);
                }
        if (t0 >= t1)
            return;
        m_timeline->zoomToRange(t0, t1, 0.02);
        m_timeline->requestWindow();
        return;
    }
    const int row = m_stats->stepModel()->rowOfStep(index);
    if (row < 0)
        return;
    const auto [t0, t1] = m_stats->stepModel()->window(row);
    m_timeline->zoomToRange(t0, t1, 0.02);
}

void Workspace::readWindow(TimeWindow window)
{
    if (!m_doc || !m_doc->large())
        return;
    m_readingWindow = true;
    // The analysis and statistics of the window shown would compete with the read for the same few
    // threads, and the read replaces them: they wait (resumed if the read fails).
    m_analysis->hold();
    m_stats->hold();
    m_windowJobs.run(
        this,
        [large = std::shared_ptr<const TraceDocument>(m_doc), window](
            const JobTracker::Ticket&) { return TraceDocument::readWindow(*large, window); },
        [](Workspace& self, auto doc) {
            self.m_readingWindow = false;
            if (!doc) {
                self.m_analysis->resume();
                self.m_stats->resume();
                emit self.statusMessage(
                    tr("Could not read that part of the trace: %1").arg(QString::fromStdString(doc.error())));
                return;
            }
            self.setWindowDocument(std::move(*doc));
        },
        [](auto doc) {
            if (doc)
                TraceOpener::releaseLater(std::move(*doc));
        });
}

bool Workspace::readWindowNow()
{
    if (!m_doc || !m_doc->large())
        return false;
    const TimelineView& v = m_timeline->view();
    const TimeNs t0 = v.mapping.firstVisible(), t1 = v.mapping.lastVisible();
    if (m_doc->window.contains(t0, t1))
        return false;
    const auto window = windowFor(*m_doc->overview, t0, t1, TraceDocument::windowEvents());
    if (!window)
        return false;
    auto doc = TraceDocument::readWindow(*m_doc, *window);
    if (!doc) {
        emit statusMessage(tr("Could not read that part of the trace: %1").arg(QString::fromStdString(doc.error())));
        return false;
    }
    m_windowJobs.cancel(); // an asynchronous read asked for earlier is not wanted any more
    m_readingWindow = false;
    setWindowDocument(std::move(*doc));
    return true;
}

void Workspace::setWindowDocument(std::shared_ptr<const TraceDocument> doc)
{
    if (!doc || !doc->large())
        return;
    const TimelineView view = m_timeline->view();
    std::shared_ptr<const TraceDocument> old = std::move(m_doc);
    m_doc = std::move(doc);
    const Trace& trace = *m_doc->trace;
    m_selectedBar = -1;
    m_timeline->setTrace(m_doc->trace, m_doc->colors);
    m_timeline->setOverview(m_doc->overview, m_doc->window, true);
    m_timeline->setAnnotations(&m_annotations->annotations());
    m_timeline->setView(view);
    m_details->setTrace(m_doc->trace.get(), m_doc->colors.get());
    m_stats->setDocument(m_doc->trace, m_doc->colors);
    m_details->setTimeOrigin(m_doc->overview->startTime());
    m_stats->setTimeOrigin(m_doc->overview->startTime());
    m_analysis->setTrace(m_doc->trace);
    uint32_t first = UINT32_MAX, last = 0;
    for (uint32_t r : trace.ranks())
        for (const Step& s : trace.steps(r)) {
            first = std::min(first, s.index);
            last = std::max(last, s.index);
        }
    m_waterfall->setTraceInfo(trace.ranks(), first == UINT32_MAX ? 0 : first, last);
    m_analysis->setRequest(m_waterfall->request());
    applyBudget();
    TraceOpener::releaseLater(std::move(old)); // hundreds of MB of columns: freed off the GUI thread
    emit statusMessage(first == UINT32_MAX
            ? tr("Read %L1 events of the trace (no whole step in that stretch)").arg(trace.eventCount())
            : tr("Read steps %1-%2 (%L3 events); the tables and the waterfall cover them")
                  .arg(first)
                  .arg(last)
                  .arg(trace.eventCount()));
    emit windowShown();
}

ExportCaption Workspace::caption() const
{
    ExportCaption c;
    if (m_doc)
        c.trace = m_doc->displayName();
    const WaterfallData& w = m_analysis->waterfall();
    c.steps = w.title;
    if (m_budget->budget()) {
        c.model = m_budget->modelLabel();
        c.hardware = m_budget->hardwareLabel();
        c.budgetMs = m_waterfall->achievable() ? m_budget->budget()->achievableMs : m_budget->budget()->idealMs;
    } else {
        c.model = tr("no budget (measured breakdown)");
    }
    if (!w.bars.empty())
        c.measuredMs = w.barsTotalMs();
    return c;
}

ExportScene Workspace::exportScene() const
{
    ExportScene s;
    if (m_doc) {
        s.trace = m_doc->trace.get();
        s.colors = m_doc->colors.get();
        s.overview = m_doc->overview.get();
        s.window = m_doc->window;
    }
    s.layout = &m_timeline->laneLayout();
    s.highlight = &m_timeline->highlight();
    s.annotations = &m_annotations->annotations();
    s.view = m_timeline->view();
    s.waterfall = m_analysis->waterfall().bars.empty() && !m_analysis->ready() ? nullptr : &m_analysis->waterfall();
    s.selectedBar = m_selectedBar;
    s.caption = caption();
    return s;
}

QSize Workspace::screenExportSize() const
{
    const int w = m_timeline->width() + (m_waterfall->isVisible() ? m_waterfall->width() : 0);
    return QSize(std::max(640, w), std::max(400, m_timeline->height() + 74));
}

QString Workspace::exportImage(const QString& path, const QSize& size, bool svg) const
{
    const ExportScene scene = exportScene();
    if (svg)
        return ExportRenderer::saveSvg(path, size, scene);
    return ExportRenderer::savePng(path, size, scene);
}

QString Workspace::exportPerfetto(const QString& path, bool selectedSteps) const
{
    if (!m_doc || !m_doc->trace)
        return tr("No trace is open");
    const gapscope::model::Trace& trace = *m_doc->trace;
    gapscope::model::PerfettoExportOptions o;
    if (selectedSteps && m_selectedSteps
        && !gapscope::model::stepWindow(trace, m_selectedSteps->first, m_selectedSteps->second, o.from, o.to))
        return tr("The trace has no steps %1 to %2").arg(m_selectedSteps->first).arg(m_selectedSteps->second);
    o.annotations = &m_annotations->annotations();
    o.analysis = m_analysis->analyzer();
    auto st = gapscope::model::exportPerfetto(trace, path.toStdString(), o);
    return st ? QString() : QString::fromStdString(st.error());
}

QString Workspace::exportHtml(const QString& path) const
{
    if (!m_doc || !m_doc->trace)
        return tr("No trace is open");
    const gapscope::model::AnalysisReport* report = m_analysis->report();
    if (!report)
        return tr("The analysis is not ready");
    const Trace& trace = *m_doc->trace;
    gapscope::model::HtmlReportInput in;
    for (const QString& p : m_doc->paths)
        in.files.push_back(p.toStdString());
    in.title = "gapscope report: " + m_doc->displayName().toStdString()
        + (m_doc->large() ? " (the window read now)" : std::string());
    in.steps = gapscope::model::stepTable(trace);
    in.kernels = gapscope::model::kernelTable(trace, gapscope::model::KernelOrder::Own);
    in.name = [&trace](gapscope::model::StringId id) { return trace.str(id); };
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return tr("Cannot write %1: %2").arg(path, file.errorString());
    const std::string html = gapscope::model::htmlReport(*report, in);
    if (file.write(html.data(), qint64(html.size())) != qint64(html.size()))
        return tr("Cannot write %1: %2").arg(path, file.errorString());
    return {};
}

QString Workspace::saveAnnotations(QString* where)
{
    if (!m_doc || m_doc->paths.isEmpty())
        return tr("No trace is open");
    QString error;
    const QString path = m_doc->paths.first();
    switch (annotationstore::save(path, m_annotations->annotations(), &error)) {
    case annotationstore::SavedTo::TraceFile:
        m_annotations->setModified(false);
        if (where)
            *where = QFileInfo(path).fileName();
        return {};
    case annotationstore::SavedTo::Sidecar:
        m_annotations->setModified(false);
        if (where)
            *where = QFileInfo(annotationstore::sidecarPath(path)).fileName();
        return {};
    case annotationstore::SavedTo::None:
        break;
    }
    return error;
}

void Workspace::addAnnotation(TimeNs t0, TimeNs t1, const QString& laneKey, const QString& text)
{
    gapscope::model::Annotation a;
    a.startNs = std::min(t0, t1);
    a.endNs = std::max(t0, t1);
    a.laneKey = laneKey.toStdString();
    a.text = text.toStdString();
    if (text.isEmpty()) {
        AnnotationDialog dialog(a, this);
        if (dialog.exec() != QDialog::Accepted)
            return;
        a = dialog.annotation();
    }
    m_annotations->add(a);
}

void Workspace::editAnnotation(int row)
{
    if (row < 0 || row >= m_annotations->rowCount())
        return;
    AnnotationDialog dialog(m_annotations->at(row), this);
    if (dialog.exec() == QDialog::Accepted)
        m_annotations->update(row, dialog.annotation());
}

void Workspace::jumpToAnnotation(int row)
{
    if (row < 0 || row >= m_annotations->rowCount())
        return;
    const auto& a = m_annotations->at(row);
    const TimeNs len = std::max<TimeNs>(a.endNs - a.startNs, 0);
    const TimeNs pad = std::max<TimeNs>(len, 20'000); // a point: show 20 us around it
    m_timeline->zoomToRange(a.startNs - pad / 2, a.endNs + pad / 2, 0.05);
    if (m_doc && !a.laneKey.empty()) {
        if (auto lane = m_doc->trace->findLane(a.laneKey))
            m_timeline->scrollToLane(*lane);
    }
}

void Workspace::setLiveDocument(std::shared_ptr<const TraceDocument> doc)
{
    m_doc = std::move(doc);
    m_selectedBar = -1;
    m_liveRanks = 0;
    m_timeline->setTrace(m_doc->trace, m_doc->colors);
    m_details->setTrace(m_doc->trace.get(), m_doc->colors.get());
    m_stats->setDocument(nullptr, nullptr);
    m_annotations->setAnnotations({}, 0);
    m_analysis->setTrace(nullptr);
    m_waterfall->setTraceInfo({}, 0, 0);
}

void Workspace::liveTraceGrew()
{
    m_timeline->setLayoutOptions(m_timeline->layoutOptions()); // new lanes; the view stays
}

void Workspace::setLiveSnapshot(const std::shared_ptr<const TraceDocument>& snapshot, bool final)
{
    const Trace& trace = *snapshot->trace;
    if (final) {
        const TimelineView view = m_timeline->view();
        m_doc = snapshot;
        m_timeline->setTrace(m_doc->trace, m_doc->colors);
        m_timeline->setView(view);
        m_details->setTrace(m_doc->trace.get(), m_doc->colors.get());
    }
    m_stats->setDocument(snapshot->trace, snapshot->colors);
    m_analysis->setTrace(snapshot->trace);
    const size_t ranks = trace.ranks().size();
    if (ranks != m_liveRanks || final) {
        uint32_t last = 0;
        for (uint32_t r : trace.ranks()) {
            if (!trace.steps(r).empty())
                last = std::max(last, trace.steps(r).back().index);
        }
        m_waterfall->setTraceInfo(trace.ranks(), 0, last);
        if (m_liveRanks == 0) {
            m_budget->prepareForTrace(snapshot->gpuName(), int(std::max<size_t>(1, ranks)));
            m_waterfall->budgetPrompt()->setTrace(
                snapshot->gpuName(), m_budget->hardwareFor(snapshot->gpuName()), int(std::max<size_t>(1, ranks)));
        }
        m_liveRanks = ranks;
    }
    m_analysis->setRequest(m_waterfall->request());
    applyBudget();
}
