// SPDX-License-Identifier: MIT
#pragma once

// BudgetPrompt: the line above the waterfall when a trace has no stored budget. It says that the bars
// are the measured breakdown and asks for what a budget needs: a model (the presets, or "Open
// config.json…") and the hardware (the presets, the one matching the trace's GPU first and marked),
// with TP taken from the trace's ranks. "Compare" emits chosen(); the owner computes the budget and
// stores it with the trace. Nothing is chosen for the user: until then there is no budget.
//
// Threading: GUI thread.

#include <QWidget>

class QComboBox;
class QLabel;
class QPushButton;

class BudgetPrompt : public QWidget {
    Q_OBJECT
public:
    explicit BudgetPrompt(QWidget* parent = nullptr);

    // The trace's GPU name (may be empty), the preset matching it ("" when none) and its rank count.
    void setTrace(const QString& gpuName, const QString& matchingHardware, int ranks);
    QComboBox* modelBox() const { return m_model; }
    QComboBox* hardwareBox() const { return m_hardware; }
    QPushButton* compareButton() const { return m_compare; }
    QString text() const;
    // The chosen model source (a preset name or a config.json path), "" when none is chosen.
    QString model() const;
    QString hardware() const;

signals:
    void chosen(const QString& model, const QString& hardware);

private:
    void updateEnabled();
    QLabel* m_text;
    QComboBox* m_model;
    QComboBox* m_hardware;
    QLabel* m_tp;
    QPushButton* m_compare;
};
