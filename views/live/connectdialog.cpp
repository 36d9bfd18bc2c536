// SPDX-License-Identifier: MIT
#include "views/live/connectdialog.h"

#include "capture/protocol/tokenauth.h"
#include "model/steps/steprule.h"
#include "views/common/csvexport.h"
#include "views/common/jobtracker.h"

#include <QApplication>
#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

using namespace gapscope;

namespace {

struct KindBox {
    const char* label;
    const char* key;
};
const KindBox kKinds[]
    = { { "kernels", "kernels" }, { "memory copies and sets", "memops" }, { "CUDA API calls", "api" },
          { "synchronisation", "sync" }, { "NVTX ranges", "nvtx" }, { "NCCL collectives", "nccl" } };

} // namespace

ConnectDialog::ConnectDialog(QWidget* parent)
    : QDialog(parent)
    , m_agents(new QListWidget)
    , m_token(new QLineEdit)
    , m_steps(new QSpinBox)
    , m_rule(new QLineEdit(QStringLiteral("auto")))
    , m_ranks(new QTableWidget(0, 7))
    , m_rankStatus(new QLabel)
{
    setWindowTitle(tr("Connect to agent"));
    auto* add = new QPushButton(tr("Add agent"));
    auto* remove = new QPushButton(tr("Remove"));
    auto* tokenFile = new QPushButton(tr("Token file…"));
    auto* list = new QPushButton(tr("List ranks"));
    m_agents->setMaximumHeight(80);
    m_token->setEchoMode(QLineEdit::Password);
    m_token->setPlaceholderText(tr("only when the agent listens beyond loopback (its --token-file)"));
    m_steps->setRange(1, 1000000);
    m_steps->setValue(20);
    m_rule->setToolTip(tr("auto, graph, nvtx:PATTERN or anchor:PATTERN (as gapscope-cli capture --step-rule)"));
    m_ranks->setHorizontalHeaderLabels(
        { tr("Agent"), tr("Rank"), tr("Host"), tr("GPU"), tr("UUID"), tr("PID"), tr("State") });
    m_ranks->horizontalHeader()->setStretchLastSection(true);
    m_ranks->verticalHeader()->hide();
    m_ranks->setEditTriggers(QAbstractItemView::NoEditTriggers);
    csvexport::addCsvActions(m_ranks, m_ranks);
    auto* agentButtons = new QVBoxLayout;
    agentButtons->addWidget(add);
    agentButtons->addWidget(remove);
    agentButtons->addStretch(1);
    auto* agentRow = new QHBoxLayout;
    agentRow->addWidget(m_agents, 1);
    agentRow->addLayout(agentButtons);
    auto* tokenRow = new QHBoxLayout;
    tokenRow->addWidget(m_token, 1);
    tokenRow->addWidget(tokenFile);
    auto* kinds = new QHBoxLayout;
    for (const auto& k : kKinds) {
        auto* box = new QCheckBox(tr(k.label));
        box->setChecked(true);
        box->setProperty("kind", QString::fromLatin1(k.key));
        kinds->addWidget(box);
        m_kinds << box;
    }
    auto* form = new QFormLayout;
    form->addRow(tr("Agents (host:port):"), agentRow);
    form->addRow(tr("Token:"), tokenRow);
    form->addRow(tr("Capture steps:"), m_steps);
    form->addRow(tr("Step rule:"), m_rule);
    form->addRow(tr("Record:"), kinds);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel);
    buttons->addButton(tr("Capture"), QDialogButtonBox::AcceptRole);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    auto* rankHeader = new QHBoxLayout;
    rankHeader->addWidget(m_rankStatus, 1);
    rankHeader->addWidget(list);
    layout->addLayout(rankHeader);
    layout->addWidget(m_ranks, 1);
    layout->addWidget(buttons);
    resize(820, 520);
    addAgent(QStringLiteral("127.0.0.1:7433"));
    connect(add, &QPushButton::clicked, this, [this] {
        addAgent(QStringLiteral("host:7433"));
        m_agents->editItem(m_agents->item(m_agents->count() - 1));
    });
    connect(remove, &QPushButton::clicked, this, [this] {
        if (m_agents->count() > 1)
            delete m_agents->takeItem(std::max(0, m_agents->currentRow()));
    });
    connect(tokenFile, &QPushButton::clicked, this, &ConnectDialog::loadTokenFile);
    connect(list, &QPushButton::clicked, this, &ConnectDialog::listRanks);
    connect(buttons, &QDialogButtonBox::accepted, this, &ConnectDialog::validateAndAccept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

void ConnectDialog::addAgent(const QString& address)
{
    auto* item = new QListWidgetItem(address);
    item->setFlags(item->flags() | Qt::ItemIsEditable);
    m_agents->addItem(item);
}

QStringList ConnectDialog::agents() const
{
    QStringList out;
    for (int i = 0; i < m_agents->count(); ++i) {
        const QString a = m_agents->item(i)->text().trimmed();
        if (!a.isEmpty())
            out << a;
    }
    return out;
}

void ConnectDialog::loadTokenFile()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("The agent's token file"));
    if (path.isEmpty())
        return;
    auto token = capture::loadToken(path.toStdString(), false);
    if (!token) {
        QMessageBox::warning(this, tr("Token file"), QString::fromStdString(token.error()));
        return;
    }
    m_token->setText(QString::fromStdString(*token));
}

bool ConnectDialog::parseStepRule(const QString& text, capture::CaptureChoice& out, QString* error)
{
    const Expected<model::StepRule::CaptureRequest> request = model::StepRule::forCapture(text.trimmed().toStdString());
    if (!request) {
        if (error)
            *error = QString::fromStdString(request.error());
        return false;
    }
    out.stepRule = request->rule;
    out.stepPattern = request->pattern;
    return true;
}

void ConnectDialog::setOptions(const capture::LiveCaptureOptions& o)
{
    m_agents->clear();
    for (const auto& a : o.agents)
        addAgent(QString::fromStdString(a));
    m_token->setText(QString::fromStdString(o.token));
    const capture::CaptureChoice c = capture::captureChoiceOf(o);
    if (c.steps)
        m_steps->setValue(int(c.steps));
    if (!c.stepRule.empty())
        m_rule->setText(QString::fromStdString(c.stepRule)
            + (c.stepPattern.empty() ? QString() : QLatin1Char(':') + QString::fromStdString(c.stepPattern)));
}

capture::LiveCaptureOptions ConnectDialog::options() const
{
    capture::LiveCaptureOptions o;
    o.agents.clear();
    for (const QString& a : agents())
        o.agents.push_back(a.toStdString());
    o.token = m_token->text().trimmed().toStdString();
    o.clientName = "gapscope";
    capture::CaptureChoice c;
    c.steps = uint32_t(m_steps->value());
    parseStepRule(m_rule->text(), c);
    for (QCheckBox* b : m_kinds) {
        const QString k = b->property("kind").toString();
        const bool on = b->isChecked();
        if (k == QLatin1String("kernels"))
            c.kernels = on;
        else if (k == QLatin1String("memops"))
            c.memoryOps = on;
        else if (k == QLatin1String("api"))
            c.runtimeApi = on;
        else if (k == QLatin1String("sync"))
            c.synchronization = on;
        else if (k == QLatin1String("nvtx"))
            c.nvtx = on;
        else if (k == QLatin1String("nccl"))
            c.nccl = on;
    }
    capture::setCaptureChoice(o, c);
    return o;
}

void ConnectDialog::validateAndAccept()
{
    capture::CaptureChoice s;
    if (agents().isEmpty()) {
        QMessageBox::warning(this, windowTitle(), tr("Give at least one agent (host:port)."));
        return;
    }
    QString why;
    if (!parseStepRule(m_rule->text(), s, &why)) {
        QMessageBox::warning(this, windowTitle(), tr("Step rule: %1").arg(why));
        return;
    }
    accept();
}

void ConnectDialog::listRanks()
{
    std::vector<std::string> addresses;
    for (const QString& a : agents())
        addresses.push_back(a.toStdString());
    m_rankStatus->setText(tr("Listing the ranks of %n agent(s)…", nullptr, int(addresses.size())));
    m_listJobs.run(
        this,
        [addresses, token = m_token->text().trimmed().toStdString()](
            const JobTracker::Ticket&) { return capture::listAgents(addresses, token, "gapscope", 2000, 3000); },
        [](ConnectDialog& self, const std::vector<capture::AgentListing>& rows) {
            QStringList errors;
            self.m_ranks->setRowCount(0);
            for (const capture::AgentListing& l : rows) {
                if (!l.error.empty())
                    errors << QString::fromStdString(l.error);
                for (const capture::RankSummary& r : l.agent.ranks) {
                    const int row = self.m_ranks->rowCount();
                    self.m_ranks->insertRow(row);
                    const QStringList cells { QString::fromStdString(l.address), QString::number(r.rank),
                        QString::fromStdString(r.host), QString::fromStdString(r.gpuName),
                        QString::fromStdString(r.gpuUuid), QString::number(r.pid), QString::fromStdString(r.state) };
                    for (int c = 0; c < cells.size(); ++c)
                        self.m_ranks->setItem(row, c, new QTableWidgetItem(cells[c]));
                }
            }
            self.m_rankStatus->setText(errors.isEmpty() ? tr("%n rank(s) registered", nullptr, self.m_ranks->rowCount())
                                                        : errors.join(QLatin1Char('\n')));
            emit self.ranksListed(self.m_ranks->rowCount());
        });
}
