// SPDX-License-Identifier: MIT
#pragma once

// WaterfallPanel: the waterfall chart with its controls: what to analyse (median step, one step,
// all or selected steps, the selected time range), which rank (or the critical rank), and which
// budget column (ideal or achievable). Without a budget, a BudgetPrompt above the chart asks for one. Emits
// requestChanged() when the user changes them; the owner forwards the request to the AnalysisRunner and feeds the
// result back with setData().
//
// Threading: GUI thread.

#include "model/analysis/coverage.h"
#include "views/analysis/analysisrunner.h"

#include <QWidget>

class BudgetPrompt;
class QCheckBox;
class QComboBox;
class QLabel;
class QScrollArea;
class QSpinBox;
class WaterfallChart;

class WaterfallPanel : public QWidget {
    Q_OBJECT
public:
    explicit WaterfallPanel(QWidget* parent = nullptr);

    WaterfallChart* chart() const { return m_chart; }
    QCheckBox* hideEmptyBox() const { return m_hideEmpty; }
    // The "pick a model and hardware" line, shown while there is no budget.
    BudgetPrompt* budgetPrompt() const { return m_prompt; }
    void setBudgetPresent(bool present);
    // Ranks and step range of the open trace (fills the controls).
    void setTraceInfo(const std::vector<uint32_t>& ranks, uint32_t firstStep, uint32_t lastStep);
    // The request the controls describe.
    WaterfallRequest request() const;
    void setRequest(const WaterfallRequest& r);
    // Range and steps chosen elsewhere (timeline selection, step table selection).
    void setSelectedRange(gapscope::model::TimeNs t0, gapscope::model::TimeNs t1);
    void setSelectedSteps(uint32_t first, uint32_t last);
    bool achievable() const;
    // The kinds of step the trace has (each step's Step::kind), and the one analysed.
    void setStepKinds(const std::vector<gapscope::model::StepKind>& present, gapscope::model::StepKind current);
    void setData(const WaterfallData& data);
    void setStatus(const QString& text);
    // What the answer stands on (model/analysis/coverage.h) and the analysis' notes, under the chart in a box
    // of at most a few lines (it scrolls), so that the chart keeps its size however many there are: items
    // that are not ok first, the ok ones in one line, notes that say the same once with their count.
    void setCoverage(const std::vector<gapscope::model::CoverageItem>& items, const QStringList& notes);
    QString coverageText() const; // as shown, in plain text
    QString status() const; // the notes line under the chart

signals:
    void requestChanged();
    void budgetColumnChanged(bool achievable);
    void stepKindChanged(gapscope::model::StepKind kind);

private:
    void updateEnabled();
    QComboBox* m_scope;
    QSpinBox* m_step;
    QComboBox* m_rank;
    QComboBox* m_column;
    QComboBox* m_kind;
    QLabel* m_status;
    QLabel* m_coverage;
    QScrollArea* m_coverageBox;
    WaterfallChart* m_chart;
    QCheckBox* m_hideEmpty;
    BudgetPrompt* m_prompt;
    gapscope::model::TimeNs m_t0 = 0, m_t1 = 0;
    uint32_t m_first = 0, m_last = gapscope::model::GapAnalyzer::kAllSteps;
};
