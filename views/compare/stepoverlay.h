// SPDX-License-Identifier: MIT
#pragma once

// StepOverlay: draws a StepOverlayData: a time axis from the step start (0) to the longer of the two
// steps, A's stream rows over B's, each event a box in its kernel's colour, and a marker at the end
// of each side's step. boxRect() is the geometry the paint uses (tests check the alignment on it).
//
// Threading: GUI thread.

#include "views/compare/stepoverlaydata.h"

#include <QWidget>

class StepOverlay : public QWidget {
    Q_OBJECT
public:
    static constexpr int kLabelWidth = 96;
    static constexpr int kAxisHeight = 22;
    static constexpr int kRowHeight = 20;

    explicit StepOverlay(QWidget* parent = nullptr);
    void setData(StepOverlayData data);
    const StepOverlayData& overlayData() const { return m_data; }
    // Where box `box` of row `row` is drawn at the current size.
    QRectF boxRect(size_t row, size_t box) const;
    double xOf(gapscope::model::TimeNs offset) const;
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    StepOverlayData m_data;
};
