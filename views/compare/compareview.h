// SPDX-License-Identifier: MIT
#pragma once

// CompareView: the viewer's side of a comparison (File > Compare with…): trace A, the one in the
// window, against trace B, as `gapscope-cli diff` compares them (model::TraceDiff, not recomputed):
//   - a summary line: both traces, the steps compared, the step time change, what was not compared;
//   - "Waterfall": A and B bars paired for the median or the mean step (chart and table with Δ,
//     largest change first);
//   - "Kernels": per kernel name count, total, own and median in A and B with Δ, new and vanished;
//   - "Steps": per step A, B and Δ (double-click: that step in "Timeline");
//   - "Timeline": a step of A stacked over the matching step of B, aligned at the step start.
// exportImage() writes what the view shows as PNG or SVG, with the same size rules as the
// window's image export.
//
// Threading: GUI thread; the comparison is built elsewhere (Comparison::make, off the GUI thread).

#include "views/compare/comparison.h"

#include <QWidget>

#include <memory>

class BarDiffModel;
class KernelDiffModel;
class QChartView;
class QComboBox;
class QLabel;
class QSpinBox;
class QTabWidget;
class StepDiffModel;
class StepOverlay;

class CompareView : public QWidget {
    Q_OBJECT
public:
    enum Tab { WaterfallTab, KernelsTab, StepsTab, TimelineTab };
    enum class Which { Median, Mean };

    explicit CompareView(QWidget* parent = nullptr);
    ~CompareView() override;

    void setComparison(std::shared_ptr<const Comparison> comparison);
    const Comparison* comparison() const { return m_comparison.get(); }

    void showWaterfall(Which which);
    // Timeline tab: step `index` of rank pair `rankPair` (index into the diff's ranks()).
    void showStep(uint32_t index, int rankPair = 0);
    QString summary() const;

    BarDiffModel* barModel() const { return m_bars; }
    KernelDiffModel* kernelModel() const { return m_kernels; }
    StepDiffModel* stepModel() const { return m_steps; }
    StepOverlay* overlay() const { return m_overlay; }
    QChartView* chartView() const { return m_chart; }
    QTabWidget* tabs() const { return m_tabs; }

    // Writes a PNG (or, with svg, an SVG) of `size` pixels of the view; "" on success, else the error.
    QString exportImage(const QString& path, const QSize& size, bool svg);

private:
    void rebuildChart();
    void updateOverlay();

    std::shared_ptr<const Comparison> m_comparison;
    QLabel* m_summary;
    QComboBox* m_which;
    QTabWidget* m_tabs;
    QChartView* m_chart;
    BarDiffModel* m_bars;
    KernelDiffModel* m_kernels;
    StepDiffModel* m_steps;
    QComboBox* m_rankPair;
    QSpinBox* m_step;
    StepOverlay* m_overlay;
};
