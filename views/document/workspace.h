// SPDX-License-Identifier: MIT
#pragma once

// Workspace: everything shown for one open trace, wired together: the timeline (with its search
// bar), the waterfall panel, the findings (first tab) and the statistics tabs, the details pane, the budget panel and
// the annotation list, plus the AnalysisRunner and the AnnotationModel behind them.
//   - budget edits -> analysis -> waterfall; a bar click -> its kernels and gaps lit up on the
//     timeline and listed in the "Bar members" table (each gap with the host event behind it);
//   - a "Host" table row -> the gaps attributed to that host event lit up (GPU idle spans, and the
//     event on its CPU thread's flame);
//   - a range selected on the timeline -> range statistics, details, the waterfall's "selected range";
//   - steps selected in the step table -> the waterfall's "selected steps"; double-click -> zoom;
//   - annotations: add from the timeline's context menu, edit, move (drag), delete, save.
// The main window docks detailsPane(), budgetPanel() and annotationPanel(); the workspace itself is
// the central widget. The headless export uses the same object without showing it.
//
// Threading: GUI thread.

#include "model/trace/trace.h"
#include "views/analysis/analysisrunner.h"
#include "views/common/jobtracker.h"
#include "views/document/exportrenderer.h"
#include "views/document/tracedocument.h"

#include <optional>
#include <utility>

#include <QWidget>

#include <memory>

class AnnotationModel;
class AnnotationPanel;
class BudgetPanel;
class DetailsPane;
class FindingsPanel;
class QueryPanel;
class QSplitter;
class SearchBar;
class StatsPanel;
class TimelineWidget;
class WaterfallPanel;

class Workspace : public QWidget {
    Q_OBJECT
public:
    explicit Workspace(QWidget* parent = nullptr);
    ~Workspace() override;

    // Shows a document. Annotations come from its sidecar when one exists, else from the file.
    // The budget comes from the stored settings (FILE.budget, else the file's budget section); without
    // them there is none until the user picks a model and hardware (then they are stored, budgetstore).
    void setDocument(std::shared_ptr<const TraceDocument> doc);
    const TraceDocument* document() const { return m_doc.get(); }
    // The user picked a step rule (the Steps menu): it joins the annotations (saved with them, in the
    // file or its sidecar; the trace opens with it again), and the next setDocument() of the same files
    // (the trace opened again with that rule) keeps the annotations as edited, still to be saved.
    void chooseStepRule(const QString& rule);

    TimelineWidget* timeline() const { return m_timeline; }
    SearchBar* searchBar() const { return m_search; }
    WaterfallPanel* waterfallPanel() const { return m_waterfall; }
    StatsPanel* statsPanel() const { return m_stats; }
    DetailsPane* detailsPane() const { return m_details; }
    BudgetPanel* budgetPanel() const { return m_budget; }
    AnnotationPanel* annotationPanel() const { return m_annotationPanel; }
    QueryPanel* queryPanel() const { return m_query; }
    AnnotationModel* annotations() const { return m_annotations; }
    AnalysisRunner* analysis() const { return m_analysis; }
    QSplitter* splitter() const { return m_outer; }

    // Waterfall bar click (as the chart does it): highlight its members.
    void selectBar(int bar);
    // Host table row click (source row of the stats panel's host model): light up its gaps.
    void selectHostRow(int row);
    // Jumps to where a finding points: its time range (or step), its rank's lanes, its bar lit up.
    void showFinding(const gapscope::model::Finding& finding);
    FindingsPanel* findingsPanel() const { return m_findings; }
    // Zooms the timeline to step `index` (its window over all ranks); for a large file, any step of the
    // file: its window is read at once.
    void showStep(uint32_t index);
    // A large file: shows the window `doc` holds (the view stays); read by readWindow() on a worker
    // when the timeline asks (TimelineWidget::windowWanted), stale reads dropped.
    void setWindowDocument(std::shared_ptr<const TraceDocument> doc);
    void readWindow(gapscope::model::TimeWindow window);
    // The same on this thread, for the window around the timeline's view (the headless export); false
    // when the view holds too many events to read (the overview is drawn) or nothing new is needed.
    bool readWindowNow();
    // A large file: a window is being read (tests wait for it).
    bool readingWindow() const { return m_readingWindow; }

    // The picture for exports: current view, waterfall, highlight, annotations, caption.
    ExportScene exportScene() const;
    ExportCaption caption() const;
    // Size of what is on screen (timeline + waterfall, plus caption and legend).
    QSize screenExportSize() const;
    // Writes a PNG (or, with svg, an SVG) of `size` pixels; "" on success, else the error.
    QString exportImage(const QString& path, const QSize& size, bool svg) const;

    // Writes a Perfetto trace (model/export/perfettoexport.h) of the whole trace, or of the steps selected
    // in the step table when `selectedSteps` and there are some; with the annotations as edited and
    // the budget waterfall when the analysis is built. "" on success, else the error.
    QString exportPerfetto(const QString& path, bool selectedSteps) const;
    // Writes the HTML report of `gapscope-cli report` (model/export/htmlreport.h) from the analysis shown
    // (its budget, classifier and kind of step); a large file: of the window read now. "" on success.
    QString exportHtml(const QString& path) const;
    // The steps selected in the step table (first, last), if any.
    std::optional<std::pair<uint32_t, uint32_t>> selectedSteps() const { return m_selectedSteps; }

    // Saves the annotations (trace file or sidecar); returns an error text ("" on success).
    QString saveAnnotations(QString* where = nullptr);
    void addAnnotation(
        gapscope::model::TimeNs t0, gapscope::model::TimeNs t1, const QString& laneKey, const QString& text);
    void editAnnotation(int row);
    // Computes the budget of `model` on `hardware` (TP from the trace) and stores it with the trace.
    void chooseBudget(const QString& model, const QString& hardware);
    void jumpToAnnotation(int row);

    // Live capture (LiveSession): the timeline and the details pane show `doc`, whose trace grows on
    // the GUI thread; the analysis and the statistics read on worker threads, so they get immutable
    // snapshots through setLiveSnapshot(). liveTraceGrew() lays the timeline out again (new lanes) and
    // repaints, keeping the view. A final snapshot also replaces the growing trace, keeping the view.
    void setLiveDocument(std::shared_ptr<const TraceDocument> doc);
    void liveTraceGrew();
    void setLiveSnapshot(const std::shared_ptr<const TraceDocument>& snapshot, bool final);

signals:
    void statusMessage(const QString& text);
    // A large file's window arrived and is shown.
    void windowShown();

private:
    void connectTimeline();
    void connectPanels();
    void applyBudget();
    void onMembers(int bar, const TimelineHighlight& highlight, const std::vector<BarMember>& list);
    void loadAnnotations();

    std::shared_ptr<const TraceDocument> m_doc;
    // Annotations edited before the trace was opened again (chooseStepRule), for those files.
    std::optional<gapscope::model::AnnotationSet> m_keptAnnotations;
    QStringList m_keptFor;
    JobTracker m_windowJobs; // a large file's window reads: a newer one makes the older stale
    bool m_readingWindow = false;
    TimelineWidget* m_timeline;
    SearchBar* m_search;
    WaterfallPanel* m_waterfall;
    StatsPanel* m_stats;
    FindingsPanel* m_findings;
    DetailsPane* m_details;
    BudgetPanel* m_budget;
    AnnotationModel* m_annotations;
    AnnotationPanel* m_annotationPanel;
    QueryPanel* m_query;
    AnalysisRunner* m_analysis;
    QSplitter* m_outer;
    QSplitter* m_top;
    int m_selectedBar = -1;
    std::optional<std::pair<uint32_t, uint32_t>> m_selectedSteps;
    size_t m_liveRanks = 0; // ranks of the last live snapshot (the waterfall's rank list)
};
