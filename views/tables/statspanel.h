// SPDX-License-Identifier: MIT
#pragma once

// StatsPanel: the tables under the timeline, in tabs: per kernel name, per component, per step
// (with the step-time histogram), the members of the clicked waterfall bar and "Host" (what the host
// did in the launch/host gaps and sync stalls, per rank: HostTableModel) and "Ranges" (kernels by the
// annotated range they ran under, CUDA-graph kernels by where their node was built: RangeTableModel). The kernel and
// component tables show the whole trace, or the selected time range once one is selected (their
// statistics are computed in the background; a newer range drops an older computation).
//
// Threading: GUI thread; statistics run on the global thread pool.

#include "model/trace/trace.h"
#include "views/analysis/analysisrunner.h"
#include "views/common/jobtracker.h"
#include "views/tables/kernelstats.h"

#include <QWidget>

#include <memory>

class EventColors;
class HostTableModel;
class KernelTableModel;
class MemberTableModel;
class RangeTableModel;
class QLabel;
class QTabWidget;
class StatsTable;
class StepHistogram;
class StepTableModel;

class StatsPanel : public QWidget {
    Q_OBJECT
public:
    explicit StatsPanel(QWidget* parent = nullptr);
    ~StatsPanel() override;

    // Shows a trace; its whole-trace statistics are computed in the background (O(events)).
    void setDocument(std::shared_ptr<const gapscope::model::Trace> trace, std::shared_ptr<const EventColors> colors);
    // Times are shown from here (default: the trace's start; a large file's window: the file's).
    void setTimeOrigin(gapscope::model::TimeNs origin);
    // Statistics of [t0, t1) (computed in the background); clearRange() goes back to the whole trace.
    void setRange(gapscope::model::TimeNs t0, gapscope::model::TimeNs t1);
    void clearRange();
    // `intervalName` names one idle interval of the bar ("launch/host gap"; model/analysis/barid.h).
    void setMembers(const QString& bar, const QString& intervalName, std::vector<BarMember> members);
    void setBandwidthCeiling(double gbs);
    // Fills the Host table from the analysis' host attribution (null: empty).
    void setHostAttribution(const gapscope::model::HostAttribution* host);

    KernelTableModel* kernelModel() const { return m_kernels; }
    KernelTableModel* componentModel() const { return m_components; }
    StepTableModel* stepModel() const { return m_steps; }
    MemberTableModel* memberModel() const { return m_members; }
    StatsTable* memberTable() const { return m_memberTable; }
    HostTableModel* hostModel() const { return m_host; }
    RangeTableModel* rangeModel() const { return m_ranges; }
    StatsTable* rangeTable() const { return m_rangeTable; }
    StatsTable* hostTable() const { return m_hostTable; }
    StatsTable* kernelTable() const { return m_kernelTable; }
    StepHistogram* histogram() const { return m_histogram; }
    QTabWidget* tabs() const { return m_tabs; }
    bool computing() const { return m_computing; }
    // A window read is about to replace the trace: the statistics computed in the background stop
    // until resume() or the next setDocument() (as AnalysisRunner::hold()).
    void hold();
    // Restarts the computation hold() stopped (the read failed: the trace stays).
    void resume();

signals:
    void stepActivated(uint32_t stepIndex);
    void stepsSelected(uint32_t first, uint32_t last);
    void memberActivated(const BarMember& member);
    // A row of the Host table was clicked (source row of hostModel()).
    void hostRowSelected(int row);
    void kernelActivated(const QString& name);
    void statsReady();
    void rangesReady(); // the Ranges tab holds the document's table

private:
    void applyStats(const KernelStatsResult& stats, const QString& scope);
    // Computes the statistics of `scope` in the background; whole = cache them as the whole trace's.
    void compute(const StatsScope& scope, const QString& label, bool whole);
    void computeRanges();
    std::shared_ptr<const gapscope::model::Trace> m_trace;
    gapscope::model::TimeNs m_origin = 0;
    std::shared_ptr<const EventColors> m_colors;
    std::shared_ptr<const KernelStatsResult> m_whole;
    KernelTableModel* m_kernels;
    KernelTableModel* m_components;
    StepTableModel* m_steps;
    MemberTableModel* m_members;
    StatsTable* m_memberTable = nullptr;
    HostTableModel* m_host;
    RangeTableModel* m_ranges;
    StatsTable* m_rangeTable = nullptr;
    JobTracker m_rangeJobs; // the Ranges tab (whole trace)
    StatsTable* m_hostTable = nullptr;
    StatsTable* m_kernelTable = nullptr;
    StepHistogram* m_histogram;
    QTabWidget* m_tabs;
    QLabel* m_scope;
    JobTracker m_jobs;
    bool m_computing = false;
    struct Computation { // the arguments of the last compute()
        StatsScope scope;
        QString label;
        bool whole = false;
    } m_last;
    bool m_held = false; // m_last was stopped by hold()
};
