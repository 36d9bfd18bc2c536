// SPDX-License-Identifier: MIT
#pragma once

// QueryPanel: SQL over the open trace (model/sql: the tables of `gapscope-cli query`, docs/SQL.md) in
// the "Query" dock. The SQL runs on a worker (a newer run makes the older stale); the last statement's
// rows show in a table (the first kMaxRows). Rows that name kernels, host events, gaps or steps light up
// on the timeline (highlightRequested): a row with `rank` and `start` (and `dur` or `end`, `name` where
// there) is the event of that rank starting there, else the span it names on that rank; a row with
// `rank` and `step` (no start) is that step's window; `step` alone, its window on every rank. A click
// lights up its row, "Light up all" every row shown.
//
// A large file holds one window of its steps at a time: the queries read that window (the panel says so).
//
// Threading: GUI thread; the query on jobPool().

#include "model/analysis/gapanalyzer.h"
#include "model/sql/sqlsession.h"
#include "views/common/jobtracker.h"
#include "views/timeline/timelinehighlight.h"

#include <QAbstractTableModel>
#include <QWidget>

#include <memory>
#include <string>
#include <vector>

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTableView;

// The result of one run: the last statement's columns and rows, or the error.
struct QueryResult {
    std::vector<std::string> columns;
    std::vector<std::vector<gapscope::model::sql::ResultValue>> rows;
    uint64_t totalRows = 0; // rows the statement gave (rows keeps the first kMaxRows)
    QString error;
    double seconds = 0;
};

class QueryResultModel : public QAbstractTableModel {
    Q_OBJECT
public:
    using QAbstractTableModel::QAbstractTableModel;
    void setResult(std::shared_ptr<const QueryResult> result);
    const QueryResult* result() const { return m_result.get(); }
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    std::shared_ptr<const QueryResult> m_result;
};

// What rows of a result name on the timeline (rules above); [t0, t1) spans them (t0 >= t1: nothing).
TimelineHighlight highlightOfRows(const gapscope::model::Trace& trace, const QueryResult& result,
    const std::vector<size_t>& rows, gapscope::model::TimeNs& t0, gapscope::model::TimeNs& t1);

class QueryPanel : public QWidget {
    Q_OBJECT
public:
    static constexpr size_t kMaxRows = 100000;

    explicit QueryPanel(QWidget* parent = nullptr);
    // The trace the queries read and how its analysis is made (the waterfall's classifier, budget and
    // kind of step); `scope` says what part of the file that is ("" for the whole trace).
    void setTrace(std::shared_ptr<const gapscope::model::Trace> trace, gapscope::model::KernelClassifier classifier,
        gapscope::model::StepBudget budget, gapscope::model::StepKind kind, const QString& scope);
    void setSql(const QString& sql);
    QString sql() const;
    void run();
    bool running() const { return m_running; }
    bool ready() const { return m_source != nullptr; } // a trace and its analysis set up: queries can run
    QueryResultModel* model() const { return m_model; }
    QTableView* table() const { return m_table; }
    QString status() const;
    // Lights up rows of the result shown (indices into its rows).
    void lightUp(const std::vector<size_t>& rows);

signals:
    void highlightRequested(const TimelineHighlight& highlight, gapscope::model::TimeNs t0, gapscope::model::TimeNs t1);
    void finished(); // a run's result (or error) is shown

private:
    struct Source; // the trace and its analysis, shared with the workers
    std::shared_ptr<Source> m_source;
    QPlainTextEdit* m_edit;
    QPushButton* m_run;
    QPushButton* m_all;
    QLabel* m_status;
    QTableView* m_table;
    QueryResultModel* m_model;
    JobTracker m_jobs;
    bool m_running = false;
    QString m_scope;
};
