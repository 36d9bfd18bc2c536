// SPDX-License-Identifier: MIT
#pragma once

// ConnectDialog: "Connect to agent…". One or more agents (host:port, default 127.0.0.1:7433; one
// per host: their streams are merged with per-host clock offsets), the token (typed, or read from
// the agent's token file; needed when the agent listens beyond loopback), the ranks each agent has
// registered with their GPUs (listed in the background: rank, host, GPU name and UUID, pid, state),
// and what to capture: N steps, the step rule as gapscope-cli capture takes it (auto, graph,
// nvtx:PATTERN, anchor:PATTERN) and the kinds of events.
//
// Threading: GUI thread; the rank listing runs on the job pool and drops stale answers.

#include "capture/client/livecapture.h"
#include "capture/client/livesummary.h"
#include "views/common/jobtracker.h"

#include <QDialog>

class QCheckBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QSpinBox;
class QTableWidget;

class ConnectDialog : public QDialog {
    Q_OBJECT
public:
    explicit ConnectDialog(QWidget* parent = nullptr);

    void setOptions(const gapscope::capture::LiveCaptureOptions& options);
    // The capture asked for; valid when the dialog was accepted.
    gapscope::capture::LiveCaptureOptions options() const;
    QStringList agents() const;

    // The step rule field ("nvtx:PATTERN", "anchor:PATTERN", "graph", "auto", ...) into the capture's
    // choice (model::StepRule::forCapture); false with the reason when it does not parse.
    static bool parseStepRule(const QString& text, gapscope::capture::CaptureChoice& out, QString* error = nullptr);

public slots:
    // Lists the ranks of every agent in the background.
    void listRanks();

signals:
    void ranksListed(int rows); // tests wait for it

private:
    void addAgent(const QString& address);
    void loadTokenFile();
    void validateAndAccept();

    QListWidget* m_agents;
    QLineEdit* m_token;
    QSpinBox* m_steps;
    QLineEdit* m_rule;
    QList<QCheckBox*> m_kinds;
    QTableWidget* m_ranks;
    QLabel* m_rankStatus;
    JobTracker m_listJobs;
};
