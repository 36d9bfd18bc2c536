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
#include <QPointer>
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

// One listed row: agent address or error, and the agent's ranks.
struct Listing {
    QString address;
    QString error;
    QString host;
    wire::RankList ranks;
};

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

bool ConnectDialog::parseStepRule(const QString& text, pb::CaptureSettings& out, QString* error)
{
    const Expected<model::StepRule::CaptureRequest> request = model::StepRule::forCapture(text.trimmed().toStdString());
    if (!request) {
        if (error)
            *error = QString::fromStdString(request.error());
        return false;
    }
    out.set_step_rule(request->rule);
    out.set_step_pattern(request->pattern);
    return true;
}

void ConnectDialog::setOptions(const capture::LiveCaptureOptions& o)
{
    m_agents->clear();
    for (const auto& a : o.agents)
        addAgent(QString::fromStdString(a));
    m_token->setText(QString::fromStdString(o.token));
    if (o.settings.steps())
        m_steps->setValue(int(o.settings.steps()));
    if (!o.settings.step_rule().empty())
        m_rule->setText(QString::fromStdString(o.settings.step_rule())
            + (o.settings.step_pattern().empty()
                    ? QString()
                    : QLatin1Char(':') + QString::fromStdString(o.settings.step_pattern())));
}

capture::LiveCaptureOptions ConnectDialog::options() const
{
    capture::LiveCaptureOptions o;
    o.agents.clear();
    for (const QString& a : agents())
        o.agents.push_back(a.toStdString());
    o.token = m_token->text().trimmed().toStdString();
    o.clientName = "gapscope";
    o.settings.set_steps(uint32_t(m_steps->value()));
    parseStepRule(m_rule->text(), o.settings);
    for (QCheckBox* b : m_kinds) {
        const QString k = b->property("kind").toString();
        const bool on = b->isChecked();
        if (k == QLatin1String("kernels"))
            o.settings.set_kernels(on);
        else if (k == QLatin1String("memops"))
            o.settings.set_memory_ops(on);
        else if (k == QLatin1String("api"))
            o.settings.set_runtime_api(on);
        else if (k == QLatin1String("sync"))
            o.settings.set_synchronization(on);
        else if (k == QLatin1String("nvtx"))
            o.settings.set_nvtx(on);
        else if (k == QLatin1String("nccl"))
            o.settings.set_nccl(on);
    }
    return o;
}

void ConnectDialog::validateAndAccept()
{
    pb::CaptureSettings s;
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
    const quint64 gen = ++m_listGeneration;
    const QStringList addresses = agents();
    const std::string token = m_token->text().trimmed().toStdString();
    m_rankStatus->setText(tr("Listing the ranks of %n agent(s)…", nullptr, int(addresses.size())));
    QPointer<ConnectDialog> self(this);
    jobPool()->submit([self, gen, addresses, token] {
        auto rows = std::make_shared<std::vector<Listing>>();
        for (const QString& a : addresses) {
            Listing l;
            l.address = a;
            capture::ClientOptions co;
            co.address = a.toStdString();
            co.token = token;
            co.clientName = "gapscope";
            co.connectTimeoutMs = 2000;
            capture::AgentClient c(co);
            if (Status s = c.connect(); !s)
                l.error = QString::fromStdString(s.message());
            else if (auto r = c.listRanks(3000))
                l.ranks = std::move(*r);
            else
                l.error = QString::fromStdString(r.error());
            l.host = QString::fromStdString(c.hello().agent().host());
            rows->push_back(std::move(l));
        }
        QMetaObject::invokeMethod(
            qApp,
            [self, gen, rows] {
                if (!self || gen != self->m_listGeneration)
                    return;
                QStringList errors;
                self->m_ranks->setRowCount(0);
                for (const Listing& l : *rows) {
                    if (!l.error.isEmpty())
                        errors << l.error;
                    for (const auto& r : l.ranks.ranks()) {
                        const int row = self->m_ranks->rowCount();
                        self->m_ranks->insertRow(row);
                        const QStringList cells { l.address, QString::number(r.info().rank()),
                            QString::fromStdString(r.info().host().empty() ? r.gpu().host() : r.info().host()),
                            QString::fromStdString(r.gpu().name()),
                            QString::fromStdString(r.gpu().uuid().empty() ? r.info().gpu_uuid() : r.gpu().uuid()),
                            QString::number(r.info().pid()), QString::fromStdString(r.state()) };
                        for (int c = 0; c < cells.size(); ++c)
                            self->m_ranks->setItem(row, c, new QTableWidgetItem(cells[c]));
                    }
                }
                self->m_rankStatus->setText(errors.isEmpty()
                        ? tr("%n rank(s) registered", nullptr, self->m_ranks->rowCount())
                        : errors.join(QLatin1Char('\n')));
                emit self->ranksListed(self->m_ranks->rowCount());
            },
            Qt::QueuedConnection);
    });
}
