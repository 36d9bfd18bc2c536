// SPDX-License-Identifier: MIT
#pragma once

// FindingsPanel: the analysis in plain words, largest first: the same findings as `gapscope-cli
// analyze` (model::makeFindings through AnalysisReport, never recomputed here). Each row says where
// it points (bar, rank, step); clicking one emits findingActivated with it, and the workspace jumps
// there (the bar lit up, the step or the gap's time range on the timeline). It is the first tab under
// the timeline and the one shown when a trace opens.
//
// Threading: GUI thread.

#include "model/analysis/findings.h"

#include <QWidget>

#include <vector>

class QLabel;
class QListWidget;

class FindingsPanel : public QWidget {
    Q_OBJECT
public:
    explicit FindingsPanel(QWidget* parent = nullptr);

    void setFindings(std::vector<gapscope::model::Finding> findings);
    const std::vector<gapscope::model::Finding>& findings() const { return m_findings; }
    QListWidget* list() const { return m_list; }
    // "rank 0 · step 17 · 2.10 ms": where a finding points, as the row's second line says it.
    static QString where(const gapscope::model::Finding& f);

signals:
    void findingActivated(const gapscope::model::Finding& finding);

private:
    QListWidget* m_list;
    QLabel* m_empty;
    std::vector<gapscope::model::Finding> m_findings;
};
