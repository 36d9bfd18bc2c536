// SPDX-License-Identifier: MIT
#pragma once

// StepsMenu: the viewer's Steps menu. It says how the shown trace's steps were found (the rule, where
// they came from, how many of each kind, what the rules tried said when none was found), lists what
// each rule would make of the trace (the candidates, counted on jobPool() when the menu is first
// opened for a trace: every rule on every rank), and lets the user pick one, or name an NVTX pattern or
// an anchor kernel. Picking emits ruleChosen(rule); the main window puts it in the trace's annotations
// (Workspace::chooseStepRule: saved with them, the trace opens with it again) and opens the trace again with it.
//
// Threading: GUI thread; the candidates are counted on a worker and come back through a queued call,
// a stale count (another trace shown since) dropped by its JobTracker ticket.

#include "views/common/jobtracker.h"

#include <QMenu>

#include <utility>
#include <vector>

#include <memory>

struct TraceDocument;

class StepsMenu : public QMenu {
    Q_OBJECT
public:
    explicit StepsMenu(QWidget* parent = nullptr);
    void setDocument(std::shared_ptr<const TraceDocument> doc);
    // The rule text a choice emits for a menu entry (tests).
    QList<QAction*> ruleActions() const { return m_ruleActions; }

signals:
    void ruleChosen(const QString& rule);

private:
    void rebuild();
    void countCandidates();
    void askPattern(const QString& kind);

    std::shared_ptr<const TraceDocument> m_doc;
    QList<QAction*> m_ruleActions;
    std::vector<std::pair<QString, int>> m_counts; // rule -> steps, once counted
    bool m_counting = false;
    JobTracker m_jobs;
};
