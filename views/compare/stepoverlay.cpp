// SPDX-License-Identifier: MIT
#include "views/compare/stepoverlay.h"
#include "views/common/timeformat.h"

#include <QPainter>

#include <algorithm>

StepOverlay::StepOverlay(QWidget* parent)
    : QWidget(parent)
{
    setMinimumHeight(kAxisHeight + 2 * kRowHeight);
}

void StepOverlay::setData(StepOverlayData data)
{
    m_data = std::move(data);
    updateGeometry();
    update();
}

QSize StepOverlay::sizeHint() const
{
    return { 800, kAxisHeight + kRowHeight * int(std::max<size_t>(2, m_data.rows.size())) + 8 };
}

double StepOverlay::xOf(gapscope::model::TimeNs offset) const
{
    const double span = double(std::max<gapscope::model::TimeNs>(1, m_data.spanNs()));
    const double w = std::max(1, width() - kLabelWidth - 8);
    return kLabelWidth + double(offset) / span * w;
}

QRectF StepOverlay::boxRect(size_t row, size_t box) const
{
    const OverlayBox& b = m_data.rows[row].boxes[box];
    const double x0 = xOf(b.t0), x1 = std::max(xOf(b.t1), x0 + 1); // at least a pixel
    return { x0, double(kAxisHeight + int(row) * kRowHeight + 2), x1 - x0, double(kRowHeight - 4) };
}

void StepOverlay::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    if (!m_data.valid) {
        p.drawText(rect(), Qt::AlignCenter, tr("Pick a step and a rank that both traces have."));
        return;
    }
    // Axis: five ticks from the step start.
    p.setPen(palette().text().color());
    const gapscope::model::TimeNs span = m_data.spanNs();
    for (int i = 0; i <= 4; ++i) {
        const gapscope::model::TimeNs t = span * i / 4;
        const double x = xOf(t);
        p.drawLine(QPointF(x, kAxisHeight - 6), QPointF(x, kAxisHeight));
        const QString text = timeformat::duration(double(t));
        const double tw = p.fontMetrics().horizontalAdvance(text);
        p.drawText(QPointF(std::min(x, width() - tw - 2), kAxisHeight - 8), text);
    }
    for (size_t r = 0; r < m_data.rows.size(); ++r) {
        const OverlayRow& row = m_data.rows[r];
        const int y = kAxisHeight + int(r) * kRowHeight;
        if (row.b)
            p.fillRect(QRect(0, y, width(), kRowHeight), palette().alternateBase());
        p.setPen(palette().text().color());
        p.drawText(QRect(4, y, kLabelWidth - 8, kRowHeight), Qt::AlignVCenter | Qt::AlignLeft, row.label);
        for (size_t k = 0; k < row.boxes.size(); ++k)
            p.fillRect(boxRect(r, k), QColor::fromRgb(row.boxes[k].color));
        // The end of this side's step.
        const double xe = xOf(row.b ? m_data.bStepNs : m_data.aStepNs);
        p.setPen(QPen(QColor(200, 40, 40), 1, Qt::DashLine));
        p.drawLine(QPointF(xe, y), QPointF(xe, y + kRowHeight));
    }
}
