// SPDX-License-Identifier: MIT
#pragma once

// LivePanel: the small live panel (a dock of the main window) for a LiveSession: what the session
// is doing (connecting with back-off, capturing, reconnecting, done, lost), progress (steps, events,
// bytes), losses (dropped events, a cut stream), one row per agent (host, clock offset and its
// error bound, state, the agent-side file), and the actions: follow the newest step (End), stop,
// capture again, fetch the agent's file after a cut, save the capture as .gapscope.
//
// Threading: GUI thread.

#include <QWidget>

class LiveSession;
class QLabel;
class QProgressBar;
class QPushButton;
class QTableWidget;
class QPlainTextEdit;

class LivePanel : public QWidget {
    Q_OBJECT
public:
    explicit LivePanel(QWidget* parent = nullptr);

    void setSession(LiveSession* session);
    LiveSession* session() const { return m_session; }

    // What the panel shows (tests read it).
    QString summaryText() const;
    QString progressText() const;
    QString lossText() const;
    QTableWidget* agentTable() const { return m_agents; }
    QPushButton* followButton() const { return m_follow; }
    QPushButton* fetchButton() const { return m_fetch; }

signals:
    // The agent's file was fetched after a cut: the main window opens it.
    void openRequested(const QString& path);
    void message(const QString& text);

private:
    void refresh();
    void fetchFile();
    void saveFile();

    LiveSession* m_session = nullptr;
    QLabel* m_summary;
    QProgressBar* m_progress;
    QLabel* m_counts;
    QLabel* m_losses;
    QTableWidget* m_agents;
    QPlainTextEdit* m_log;
    QPushButton* m_follow;
    QPushButton* m_stop;
    QPushButton* m_again;
    QPushButton* m_fetch;
    QPushButton* m_save;
    int m_logged = 0;
};
