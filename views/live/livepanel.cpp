// SPDX-License-Identifier: MIT
#include "views/live/livepanel.h"

#include "views/common/csvexport.h"
#include "views/common/timeformat.h"
#include "views/live/livesession.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace {

QString count(quint64 v)
{
    if (v >= 1000000)
        return QStringLiteral("%1 M").arg(double(v) / 1e6, 0, 'f', 2);
    if (v >= 10000)
        return QStringLiteral("%1 k").arg(double(v) / 1e3, 0, 'f', 1);
    return QString::number(v);
}

QString bytes(quint64 v)
{
    if (v >= (1u << 20))
        return QStringLiteral("%1 MiB").arg(double(v) / double(1u << 20), 0, 'f', 1);
    return QStringLiteral("%1 KiB").arg(double(v) / 1024.0, 0, 'f', 1);
}

QString offsetText(const LiveAgentInfo& a, bool reference)
{
    if (reference)
        return QObject::tr("reference (offset %1 ± %2)")
            .arg(timeformat::duration(double(a.offsetNs)), timeformat::duration(a.offsetErrorNs));
    return QObject::tr("%1 ± %2 (applied: %3)")
        .arg(timeformat::duration(double(a.offsetNs)), timeformat::duration(a.offsetErrorNs),
            timeformat::duration(double(a.shiftNs)));
}

} // namespace

LivePanel::LivePanel(QWidget* parent)
    : QWidget(parent)
    , m_summary(new QLabel)
    , m_progress(new QProgressBar)
    , m_counts(new QLabel)
    , m_losses(new QLabel)
    , m_agents(new QTableWidget(0, 5))
    , m_log(new QPlainTextEdit)
    , m_follow(new QPushButton(tr("Follow newest step (End)")))
    , m_stop(new QPushButton(tr("Stop")))
    , m_again(new QPushButton(tr("Capture again")))
    , m_fetch(new QPushButton(tr("Fetch the agent's file…")))
    , m_save(new QPushButton(tr("Save as…")))
{
    m_summary->setWordWrap(true);
    m_losses->setWordWrap(true);
    m_follow->setCheckable(true);
    m_agents->setHorizontalHeaderLabels({ tr("Agent"), tr("Host"), tr("Clock offset"), tr("State"), tr("Agent file") });
    m_agents->horizontalHeader()->setStretchLastSection(true);
    m_agents->verticalHeader()->hide();
    m_agents->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_agents->setMaximumHeight(110);
    csvexport::addCsvActions(m_agents, m_agents);
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(200);
    m_log->setMaximumHeight(90);
    auto* buttons = new QHBoxLayout;
    for (QPushButton* b : { m_follow, m_stop, m_again, m_fetch, m_save })
        buttons->addWidget(b);
    buttons->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_summary);
    layout->addWidget(m_progress);
    layout->addWidget(m_counts);
    layout->addWidget(m_losses);
    layout->addLayout(buttons);
    layout->addWidget(m_agents);
    layout->addWidget(m_log);
    connect(m_follow, &QPushButton::toggled, this, [this](bool on) {
        if (m_session)
            m_session->setFollow(on);
    });
    connect(m_stop, &QPushButton::clicked, this, [this] {
        if (m_session)
            m_session->stop();
    });
    connect(m_again, &QPushButton::clicked, this, [this] {
        if (m_session)
            m_session->restart();
    });
    connect(m_fetch, &QPushButton::clicked, this, &LivePanel::fetchFile);
    connect(m_save, &QPushButton::clicked, this, &LivePanel::saveFile);
    refresh();
}

void LivePanel::setSession(LiveSession* session)
{
    if (m_session)
        disconnect(m_session, nullptr, this, nullptr);
    m_session = session;
    m_logged = 0;
    m_log->clear();
    if (m_session) {
        connect(m_session, &LiveSession::statusChanged, this, &LivePanel::refresh);
        connect(m_session, &LiveSession::followChanged, this, &LivePanel::refresh);
        connect(m_session, &LiveSession::destroyed, this, [this] { setSession(nullptr); });
        connect(m_session, &LiveSession::fetched, this, [this](const QString& path, const QString& error) {
            if (!error.isEmpty()) {
                emit message(tr("Fetching the agent's file failed: %1").arg(error));
                return;
            }
            emit message(tr("Fetched the agent's complete file into %1").arg(path));
            emit openRequested(path);
        });
    }
    refresh();
}

QString LivePanel::summaryText() const
{
    return m_summary->text();
}

QString LivePanel::progressText() const
{
    return m_counts->text();
}

QString LivePanel::lossText() const
{
    return m_losses->text();
}

void LivePanel::refresh()
{
    const bool has = m_session != nullptr;
    const LiveStatus st = has ? m_session->status() : LiveStatus {};
    m_summary->setText(has
            ? QStringLiteral("<b>%1</b> — %2").arg(LiveStatus::phaseName(st.phase), st.message.toHtmlEscaped())
            : tr("Not connected (Live > Connect to agent…)"));
    m_progress->setRange(0, int(std::max<quint32>(1, st.stepsTotal)));
    m_progress->setValue(int(std::min(st.stepsDone, std::max<quint32>(1, st.stepsTotal))));
    m_progress->setFormat(st.stepsTotal ? tr("step %v of %m") : tr("%1 steps").arg(st.stepsDone));
    m_counts->setText(
        tr("events: %1 received, %2 shown, %3 recorded by the agents · %4 received")
            .arg(count(st.eventsReceived), count(st.eventsShown), count(st.eventsAtAgent), bytes(st.bytesReceived)));
    QStringList losses;
    if (st.droppedEvents)
        losses << tr("%1 events dropped on the way (counted by the ranks and the agents)").arg(count(st.droppedEvents));
    if (st.cut)
        losses << tr("the live stream was cut: %1 — the agent's file is complete").arg(st.cutReason);
    m_losses->setText(losses.isEmpty() ? tr("no losses") : losses.join(QStringLiteral("; ")));
    m_losses->setStyleSheet(losses.isEmpty() ? QString() : QStringLiteral("color: #b04000"));
    m_agents->setRowCount(st.agents.size());
    for (int i = 0; i < st.agents.size(); ++i) {
        const LiveAgentInfo& a = st.agents[i];
        const QStringList cells { a.address, a.host + (a.replay ? tr(" (replay)") : QString()),
            a.instanceId ? offsetText(a, i == 0) : QString(), a.state, a.outputPath };
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            QStringList ranks;
            for (const auto& r : a.ranks)
                ranks << tr("rank %1: %2 %3 pid %4").arg(r.rank).arg(r.gpuName, r.gpuUuid).arg(r.pid);
            item->setToolTip(ranks.join(QLatin1Char('\n')));
            m_agents->setItem(i, c, item);
        }
    }
    for (; m_logged < st.errors.size(); ++m_logged)
        m_log->appendPlainText(st.errors[m_logged]);
    const QSignalBlocker block(m_follow);
    m_follow->setChecked(has && m_session->follow());
    m_follow->setEnabled(has);
    m_stop->setEnabled(has && st.active());
    m_again->setEnabled(has && !st.active());
    m_fetch->setEnabled(has && st.cut && !st.active());
    m_save->setEnabled(has && st.eventsReceived > 0);
    m_fetch->setToolTip(st.agents.isEmpty() ? QString() : tr("Agent-side file: %1").arg(st.agents[0].outputPath));
}

void LivePanel::fetchFile()
{
    if (!m_session)
        return;
    const LiveStatus& st = m_session->status();
    for (int i = 0; i < st.agents.size(); ++i) {
        if (!st.agents[i].state.contains(QLatin1String("cut")))
            continue;
        const QString suggested = QFileInfo(st.agents[i].outputPath).fileName();
        const QString path = QFileDialog::getSaveFileName(this,
            tr("Fetch the agent's file (%1)").arg(st.agents[i].address), suggested, tr("gapscope traces (*.gapscope)"));
        if (!path.isEmpty())
            m_session->fetchAgentFile(i, path);
    }
}

void LivePanel::saveFile()
{
    if (!m_session)
        return;
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save the capture"), QStringLiteral("capture.gapscope"), tr("gapscope traces (*.gapscope)"));
    if (path.isEmpty())
        return;
    const QString err = m_session->saveAs(path);
    emit message(err.isEmpty() ? tr("Saved %1").arg(path) : tr("Could not save: %1").arg(err));
}
