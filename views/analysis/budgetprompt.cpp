// SPDX-License-Identifier: MIT
#include "views/analysis/budgetprompt.h"

#include "model/budget/resources.h"

#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace {

// Item data of the model box's entries that are no model.
constexpr int kOpenConfig = 1;

} // namespace

BudgetPrompt::BudgetPrompt(QWidget* parent)
    : QWidget(parent)
    , m_text(new QLabel)
    , m_model(new QComboBox)
    , m_hardware(new QComboBox)
    , m_tp(new QLabel)
    , m_compare(new QPushButton(tr("Compare with this budget")))
{
    m_text->setWordWrap(true);
    m_text->setText(tr("<b>No budget is stored with this trace.</b> The bars are the measured breakdown: kernels by "
                       "component, collective wait, launch/host gaps, sync stalls, step gap. To compare them with a "
                       "theoretical budget, pick the model and the hardware:"));
    m_model->addItem(tr("model…"));
    for (const auto& n : gapscope::model::listPresets("models"))
        m_model->addItem(QString::fromStdString(n), QString::fromStdString(n));
    m_model->addItem(tr("Open config.json…"), kOpenConfig);
    connect(m_model, &QComboBox::activated, this, [this](int index) {
        if (m_model->itemData(index).toInt() != kOpenConfig || m_model->itemData(index).typeId() != QMetaType::Int)
            return updateEnabled();
        const QString f = QFileDialog::getOpenFileName(
            this, tr("Model config.json"), QString(), tr("Hugging Face config (config.json *.json);;All files (*)"));
        if (f.isEmpty()) {
            m_model->setCurrentIndex(0);
        } else {
            m_model->insertItem(index, f, f);
            m_model->setCurrentIndex(index);
        }
        updateEnabled();
    });
    connect(m_hardware, &QComboBox::currentIndexChanged, this, &BudgetPrompt::updateEnabled);
    connect(m_model, &QComboBox::currentIndexChanged, this, &BudgetPrompt::updateEnabled);
    connect(m_compare, &QPushButton::clicked, this, [this] {
        if (!model().isEmpty() && !hardware().isEmpty())
            emit chosen(model(), hardware());
    });
    auto* row = new QHBoxLayout;
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(m_model, 2);
    row->addWidget(m_hardware, 2);
    row->addWidget(m_tp);
    row->addWidget(m_compare);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(2);
    layout->addWidget(m_text);
    layout->addLayout(row);
    setStyleSheet(QStringLiteral("BudgetPrompt { background: #fff8e1; }"));
    setAttribute(Qt::WA_StyledBackground, true);
    setTrace(QString(), QString(), 1);
}

void BudgetPrompt::setTrace(const QString& gpuName, const QString& matchingHardware, int ranks)
{
    m_hardware->clear();
    m_hardware->addItem(tr("hardware…"));
    if (!matchingHardware.isEmpty())
        m_hardware->addItem(tr("%1 (this trace's GPU: %2)").arg(matchingHardware, gpuName), matchingHardware);
    for (const auto& n : gapscope::model::listPresets("hardware")) {
        const QString name = QString::fromStdString(n);
        if (name != matchingHardware)
            m_hardware->addItem(name, name);
    }
    m_hardware->setCurrentIndex(matchingHardware.isEmpty() ? 0 : 1);
    m_hardware->setToolTip(gpuName.isEmpty() ? tr("The trace names no GPU") : tr("The trace's GPU: %1").arg(gpuName));
    m_model->setCurrentIndex(0);
    m_tp->setText(tr("TP %1 (the trace's ranks)").arg(std::max(1, ranks)));
    updateEnabled();
}

QString BudgetPrompt::text() const
{
    return m_text->text();
}

QString BudgetPrompt::model() const
{
    const QVariant v = m_model->currentData();
    return v.typeId() == QMetaType::QString ? v.toString() : QString();
}

QString BudgetPrompt::hardware() const
{
    return m_hardware->currentData().toString();
}

void BudgetPrompt::updateEnabled()
{
    m_compare->setEnabled(!model().isEmpty() && !hardware().isEmpty());
}
