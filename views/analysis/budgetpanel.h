// SPDX-License-Identifier: MIT
#pragma once

// BudgetPanel: the inputs of the theoretical budget as a form (model preset or any HF config.json;
// hardware preset, preset JSON or calibration profile; precision for all and per component; TP, EP,
// batch, context, collective latency, engine replication, CUDA graphs, speculative decoding) and
// the resulting totals. Every edit recomputes the budget (computeBudget is microseconds) after a
// short debounce and emits budgetChanged(); errors are shown in the panel, naming the bad input.
// Model configs and hardware profiles are loaded once per source and cached. With no model chosen
// there is no budget (not an error): the panel says so and asks for a model.
//
// Threading: GUI thread.

#include "model/budget/budget.h"
#include "model/trace/tracemeta.h"

#include <QWidget>

#include <map>
#include <memory>
#include <optional>

namespace gapscope::pb {
class BudgetSettings;
}

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;
class QTimer;

class BudgetPanel : public QWidget {
    Q_OBJECT
public:
    explicit BudgetPanel(QWidget* parent = nullptr);
    ~BudgetPanel() override;

    // The current budget (nullopt while the inputs are invalid) and the inputs it came from.
    const std::optional<gapscope::model::Budget>& budget() const { return m_budget; }
    const gapscope::model::BudgetInputs& inputs() const { return m_inputs; }
    QString error() const { return m_error; }
    QString modelLabel() const;
    QString hardwareLabel() const;

    // Fills the form from stored settings (a trace's budget section) or from a source string set
    // ("glm-5", "h200-sxm", "all=nvfp4,lm_head=bf16", ...). Recomputes at once.
    bool applySettings(const gapscope::model::BudgetSettings& settings, QString* error = nullptr);
    void setModel(const QString& presetOrFile);
    void setHardware(const QString& presetOrFile);
    void setPrecisionSpec(const QString& spec);
    void setParallelism(int tp, int ep);
    void setEngine(const QString& engine);
    void setAllreduceUs(double us); // < 0: the hardware table
    gapscope::model::BudgetSettings toSettings() const;
    // For a trace without a stored budget: no model (so no budget until one is picked), the hardware
    // preset matching the trace's GPU name (none when no preset matches), TP = ranks.
    void prepareForTrace(const QString& gpuName, int ranks);
    // The hardware preset whose device names occur in `gpuName` ("" when none does).
    QString hardwareFor(const QString& gpuName);
    bool hasModel() const;
    // Recomputes now (skipping the debounce); returns whether a budget came out.
    bool recompute();

signals:
    void budgetChanged();

private:
    void buildForm();
    void scheduleRecompute();
    void browseModel();
    void browseHardware();
    QString precisionSpecFromForm() const;
    gapscope::Expected<gapscope::model::ModelConfig> model(const std::string& source);
    gapscope::Expected<gapscope::model::HardwareProfile> hardware(const std::string& source);

    QComboBox* m_model = nullptr;
    QComboBox* m_hardware = nullptr;
    QComboBox* m_allPrecision = nullptr;
    std::map<QString, QComboBox*> m_componentPrecision; // component -> combo ("" = as all)
    QSpinBox* m_tp = nullptr;
    QSpinBox* m_ep = nullptr;
    QSpinBox* m_batch = nullptr;
    QSpinBox* m_context = nullptr;
    QDoubleSpinBox* m_allreduceUs = nullptr; // 0 = hardware table
    QComboBox* m_engine = nullptr;
    QCheckBox* m_graphs = nullptr;
    QSpinBox* m_draft = nullptr;
    QDoubleSpinBox* m_acceptance = nullptr;
    QLabel* m_result = nullptr;
    QTimer* m_debounce = nullptr;
    bool m_loading = false;

    std::map<std::string, gapscope::model::ModelConfig> m_models;
    std::map<std::string, gapscope::model::HardwareProfile> m_hardwares;
    gapscope::model::BudgetInputs m_inputs;
    std::optional<gapscope::model::Budget> m_budget;
    QString m_error;
};
