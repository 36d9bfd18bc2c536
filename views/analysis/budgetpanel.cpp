// SPDX-License-Identifier: MIT
#include "views/analysis/budgetpanel.h"

#include "model/budget/budgetsettings.h"
#include "model/budget/resources.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

using namespace gapscope;
using namespace gapscope::model;

namespace {

QComboBox* precisionCombo(bool withInherit)
{
    auto* c = new QComboBox;
    if (withInherit)
        c->addItem(QObject::tr("(as all)"), QString());
    for (const auto& p : allPrecisions())
        c->addItem(QString::fromLatin1(p.name), QString::fromLatin1(p.name));
    return c;
}

QComboBox* presetCombo(const std::string& kind)
{
    auto* c = new QComboBox;
    c->setEditable(true);
    c->setInsertPolicy(QComboBox::NoInsert);
    for (const auto& n : listPresets(kind))
        c->addItem(QString::fromStdString(n));
    return c;
}

QHBoxLayout* withBrowse(QWidget* field, QToolButton* button)
{
    auto* row = new QHBoxLayout;
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(field, 1);
    row->addWidget(button);
    return row;
}

} // namespace

BudgetPanel::BudgetPanel(QWidget* parent)
    : QWidget(parent)
    , m_debounce(new QTimer(this))
{
    m_debounce->setSingleShot(true);
    m_debounce->setInterval(40);
    connect(m_debounce, &QTimer::timeout, this, [this] { recompute(); });
    buildForm();
}

BudgetPanel::~BudgetPanel() = default;

void BudgetPanel::buildForm()
{
    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    m_model = presetCombo("models");
    auto* browseModelButton = new QToolButton;
    browseModelButton->setText(QStringLiteral("…"));
    browseModelButton->setToolTip(tr("Open a Hugging Face config.json (or its folder)"));
    connect(browseModelButton, &QToolButton::clicked, this, &BudgetPanel::browseModel);
    form->addRow(tr("Model"), withBrowse(m_model, browseModelButton));
    m_model->lineEdit()->setPlaceholderText(tr("pick a model"));
    m_hardware = presetCombo("hardware");
    m_hardware->lineEdit()->setPlaceholderText(tr("pick the hardware"));
    auto* browseHwButton = new QToolButton;
    browseHwButton->setText(QStringLiteral("…"));
    browseHwButton->setToolTip(tr("Open a hardware preset JSON or a gapscope-calibrate profile"));
    connect(browseHwButton, &QToolButton::clicked, this, &BudgetPanel::browseHardware);
    form->addRow(tr("Hardware"), withBrowse(m_hardware, browseHwButton));
    m_allPrecision = precisionCombo(false);
    form->addRow(tr("Precision (all)"), m_allPrecision);
    m_tp = new QSpinBox;
    m_tp->setRange(1, 1024);
    m_ep = new QSpinBox;
    m_ep->setRange(1, 1024);
    auto* par = new QHBoxLayout;
    par->addWidget(new QLabel(tr("TP")));
    par->addWidget(m_tp, 1);
    par->addWidget(new QLabel(tr("EP")));
    par->addWidget(m_ep, 1);
    form->addRow(tr("Parallelism"), par);
    m_batch = new QSpinBox;
    m_batch->setObjectName(QStringLiteral("batch"));
    m_batch->setRange(1, 65536);
    form->addRow(tr("Batch"), m_batch);
    m_context = new QSpinBox;
    m_context->setObjectName(QStringLiteral("context"));
    m_context->setRange(0, 10'000'000);
    m_context->setSingleStep(1024);
    form->addRow(tr("Context (tokens)"), m_context);
    m_allreduceUs = new QDoubleSpinBox;
    m_allreduceUs->setRange(0, 10000);
    m_allreduceUs->setDecimals(1);
    m_allreduceUs->setSuffix(tr(" us"));
    m_allreduceUs->setSpecialValueText(tr("hardware table"));
    form->addRow(tr("Collective latency"), m_allreduceUs);
    m_engine = new QComboBox;
    m_engine->addItem(QStringLiteral("sglang"));
    m_engine->addItem(QStringLiteral("none"));
    m_engine->setToolTip(tr("Engine replication: which tensors every rank reads whole"));
    form->addRow(tr("Engine replication"), m_engine);
    m_graphs = new QCheckBox(tr("CUDA graphs"));
    form->addRow(QString(), m_graphs);
    m_draft = new QSpinBox;
    m_draft->setRange(0, 64);
    m_acceptance = new QDoubleSpinBox;
    m_acceptance->setRange(0, 65);
    m_acceptance->setDecimals(2);
    m_acceptance->setSpecialValueText(tr("-"));
    auto* spec = new QHBoxLayout;
    spec->addWidget(new QLabel(tr("draft")));
    spec->addWidget(m_draft, 1);
    spec->addWidget(new QLabel(tr("accepted")));
    spec->addWidget(m_acceptance, 1);
    form->addRow(tr("Speculative"), spec);

    auto* perComponent = new QGroupBox(tr("Precision per component"));
    perComponent->setCheckable(false);
    auto* pcForm = new QFormLayout(perComponent);
    for (const auto& c : kComponents) {
        if (!c.hasPrecision)
            continue;
        QComboBox* combo = precisionCombo(true);
        m_componentPrecision[QString::fromLatin1(c.name)] = combo;
        pcForm->addRow(QString::fromLatin1(c.name), combo);
        connect(combo, &QComboBox::currentIndexChanged, this, &BudgetPanel::scheduleRecompute);
    }
    m_result = new QLabel;
    m_result->setWordWrap(true);
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* outer = new QVBoxLayout(this);
    outer->addLayout(form);
    outer->addWidget(perComponent);
    outer->addWidget(m_result);
    outer->addStretch(1);

    for (QComboBox* c : { m_model, m_hardware })
        connect(c, &QComboBox::currentTextChanged, this, &BudgetPanel::scheduleRecompute);
    for (QComboBox* c : { m_allPrecision, m_engine })
        connect(c, &QComboBox::currentIndexChanged, this, &BudgetPanel::scheduleRecompute);
    for (QSpinBox* s : { m_tp, m_ep, m_batch, m_context, m_draft })
        connect(s, &QSpinBox::valueChanged, this, &BudgetPanel::scheduleRecompute);
    for (QDoubleSpinBox* s : { m_allreduceUs, m_acceptance })
        connect(s, &QDoubleSpinBox::valueChanged, this, &BudgetPanel::scheduleRecompute);
    connect(m_graphs, &QCheckBox::toggled, this, &BudgetPanel::scheduleRecompute);
    m_tp->setValue(8);
    m_batch->setValue(1);
    m_graphs->setChecked(true);
}

void BudgetPanel::scheduleRecompute()
{
    if (!m_loading)
        m_debounce->start();
}

void BudgetPanel::browseModel()
{
    const QString f
        = QFileDialog::getOpenFileName(this, tr("Model config.json"), QString(), tr("JSON (*.json);;All files (*)"));
    if (!f.isEmpty())
        setModel(f);
}

void BudgetPanel::browseHardware()
{
    const QString f = QFileDialog::getOpenFileName(
        this, tr("Hardware preset or calibration profile"), QString(), tr("JSON (*.json);;All files (*)"));
    if (!f.isEmpty())
        setHardware(f);
}

Expected<ModelConfig> BudgetPanel::model(const std::string& source)
{
    auto it = m_models.find(source);
    if (it != m_models.end())
        return it->second;
    auto m = loadModelConfig(source);
    if (m)
        m_models.emplace(source, *m);
    return m;
}

Expected<HardwareProfile> BudgetPanel::hardware(const std::string& source)
{
    auto it = m_hardwares.find(source);
    if (it != m_hardwares.end())
        return it->second;
    auto h = loadHardwareProfile(source);
    if (h)
        m_hardwares.emplace(source, *h);
    return h;
}

QString BudgetPanel::precisionSpecFromForm() const
{
    QStringList parts { QStringLiteral("all=") + m_allPrecision->currentData().toString() };
    for (const auto& [component, combo] : m_componentPrecision) {
        const QString v = combo->currentData().toString();
        if (!v.isEmpty())
            parts << component + QLatin1Char('=') + v;
    }
    return parts.join(QLatin1Char(','));
}

bool BudgetPanel::recompute()
{
    m_debounce->stop();
    auto fail = [this](const QString& message) {
        m_budget.reset();
        m_error = message;
        m_result->setText(QStringLiteral("<span style='color:#c62828'>%1</span>").arg(message.toHtmlEscaped()));
        emit budgetChanged();
        return false;
    };
    BudgetInputs in;
    in.modelSource = m_model->currentText().trimmed().toStdString();
    in.hardwareSource = m_hardware->currentText().trimmed().toStdString();
    if (in.modelSource.empty() || in.hardwareSource.empty()) {
        // Nothing chosen yet: no budget, and no invented one either.
        m_budget.reset();
        m_error.clear();
        m_result->setText(tr("<b>No budget.</b> Pick a model (a preset, or … to open a config.json) and the "
                             "hardware to compare the measured time with a theoretical budget."));
        m_result->setToolTip(QString());
        emit budgetChanged();
        return false;
    }
    auto m = model(in.modelSource);
    if (!m)
        return fail(QString::fromStdString(m.error()));
    auto h = hardware(in.hardwareSource);
    if (!h)
        return fail(QString::fromStdString(h.error()));
    in.model = *m;
    in.hardware = *h;
    in.tp = uint32_t(m_tp->value());
    in.ep = uint32_t(m_ep->value());
    in.batch = uint32_t(m_batch->value());
    in.context = uint64_t(m_context->value());
    if (Status s = applyPrecisionSpec(precisionSpecFromForm().toStdString(), in); !s)
        return fail(QString::fromStdString(s.message()));
    if (!parseEngine(m_engine->currentText().toStdString(), in.engine))
        return fail(tr("unknown engine '%1'").arg(m_engine->currentText()));
    in.allreduceUs = m_allreduceUs->value() > 0 ? m_allreduceUs->value() : -1;
    in.cudaGraphs = m_graphs->isChecked();
    in.draftTokens = uint32_t(m_draft->value());
    in.acceptanceLength = m_acceptance->value();
    auto b = computeBudget(in);
    if (!b)
        return fail(QString::fromStdString(b.error()));
    m_inputs = std::move(in);
    m_budget = std::move(*b);
    m_error.clear();
    QStringList assumptions;
    for (const auto& a : m_budget->assumptions)
        assumptions << QString::fromStdString(a);
    m_result->setText(tr("<b>ideal %1 ms/step</b> (%2 tok/s)<br>achievable %3 ms/step (%4 tok/s)<br>"
                         "weights read %5 GB/GPU/step, ~%6 kernels/step")
                          .arg(m_budget->idealMs, 0, 'f', 3)
                          .arg(m_budget->tokPerSecIdeal, 0, 'f', 1)
                          .arg(m_budget->achievableMs, 0, 'f', 3)
                          .arg(m_budget->tokPerSecAchievable, 0, 'f', 1)
                          .arg(m_budget->weightBytesPerGpu / 1e9, 0, 'f', 2)
                          .arg(m_budget->kernelsPerStep, 0, 'f', 0));
    m_result->setToolTip(assumptions.join(QLatin1Char('\n')));
    emit budgetChanged();
    return true;
}

QString BudgetPanel::modelLabel() const
{
    const QString name
        = QString::fromStdString(m_inputs.model.name.empty() ? m_inputs.modelSource : m_inputs.model.name);
    return tr("%1 (%2, TP%3)").arg(name, QString::fromStdString(precisionSpec(m_inputs))).arg(m_inputs.tp);
}

QString BudgetPanel::hardwareLabel() const
{
    const auto& h = m_inputs.hardware;
    return QString::fromStdString(h.displayName.empty() ? h.name : h.displayName);
}

void BudgetPanel::setModel(const QString& presetOrFile)
{
    m_model->setCurrentText(presetOrFile);
    scheduleRecompute();
}

void BudgetPanel::setHardware(const QString& presetOrFile)
{
    m_hardware->setCurrentText(presetOrFile);
    scheduleRecompute();
}

void BudgetPanel::setPrecisionSpec(const QString& spec)
{
    BudgetInputs in;
    if (!applyPrecisionSpec(spec.toStdString(), in))
        return;
    const QSignalBlocker block(this);
    if (in.allPrecision)
        m_allPrecision->setCurrentIndex(m_allPrecision->findData(QString::fromLatin1(toString(*in.allPrecision))));
    for (const auto& [component, combo] : m_componentPrecision) {
        Component c;
        QString value;
        const bool known = parseComponent(component.toStdString(), c);
        if (known && c == Component::KvCache && in.kvCachePrecision)
            value = QString::fromLatin1(toString(*in.kvCachePrecision));
        else if (known && in.precision.count(c))
            value = QString::fromLatin1(toString(in.precision.at(c)));
        combo->setCurrentIndex(std::max(0, combo->findData(value)));
    }
    scheduleRecompute();
}

void BudgetPanel::setParallelism(int tp, int ep)
{
    m_tp->setValue(tp);
    m_ep->setValue(ep);
}

void BudgetPanel::setEngine(const QString& engine)
{
    m_engine->setCurrentText(engine);
}

void BudgetPanel::setAllreduceUs(double us)
{
    m_allreduceUs->setValue(us > 0 ? us : 0);
}

bool BudgetPanel::applySettings(const model::BudgetSettings& settings, QString* error)
{
    auto in = fromBudgetSettings(settings);
    if (!in) {
        if (error)
            *error = QString::fromStdString(in.error());
        return false;
    }
    // The file carries the config and hardware JSON: use them even where the presets differ.
    m_models[in->modelSource] = in->model;
    m_hardwares[in->hardwareSource] = in->hardware;
    m_loading = true;
    m_model->setCurrentText(QString::fromStdString(in->modelSource));
    m_hardware->setCurrentText(QString::fromStdString(in->hardwareSource));
    setPrecisionSpec(QString::fromStdString(precisionSpec(*in)));
    setParallelism(int(in->tp), int(in->ep));
    m_batch->setValue(int(in->batch));
    m_context->setValue(int(std::min<uint64_t>(in->context, 10'000'000)));
    setAllreduceUs(in->allreduceUs);
    m_engine->setCurrentText(QString::fromLatin1(toString(in->engine)));
    m_graphs->setChecked(in->cudaGraphs);
    m_draft->setValue(int(in->draftTokens));
    m_acceptance->setValue(in->acceptanceLength);
    m_loading = false;
    return recompute();
}

model::BudgetSettings BudgetPanel::toSettings() const
{
    return toBudgetSettings(m_inputs);
}

QString BudgetPanel::hardwareFor(const QString& gpuName)
{
    if (gpuName.isEmpty())
        return {};
    for (const auto& name : listPresets("hardware")) {
        auto h = hardware(name);
        if (!h)
            continue;
        for (const auto& dev : h->deviceNames) {
            if (gpuName.contains(QString::fromStdString(dev), Qt::CaseInsensitive))
                return QString::fromStdString(name);
        }
    }
    return {};
}

bool BudgetPanel::hasModel() const
{
    return !m_model->currentText().trimmed().isEmpty();
}

void BudgetPanel::prepareForTrace(const QString& gpuName, int ranks)
{
    m_loading = true;
    m_model->setCurrentText(QString());
    m_hardware->setCurrentText(hardwareFor(gpuName));
    setParallelism(std::max(1, ranks), 1);
    setPrecisionSpec(QStringLiteral("all=bf16"));
    m_loading = false;
    recompute();
}
