// SPDX-License-Identifier: MIT
#include "views/tables/stephistogram.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace {
constexpr int kMargin = 4;
constexpr int kLabelHeight = 14;
}

StepHistogram::StepHistogram(QWidget* parent)
    : QWidget(parent)
{
    setMinimumHeight(70);
}

void StepHistogram::setValues(std::vector<double> ms)
{
    m_values.clear();
    for (double v : ms) {
        if (std::isfinite(v))
            m_values.push_back(v);
    }
    m_counts.clear();
    if (!m_values.empty()) {
        std::sort(m_values.begin(), m_values.end());
        m_median = m_values[m_values.size() / 2];
        m_lo = m_values.front();
        const double hi = m_values.back();
        const int bins = std::clamp(int(std::sqrt(double(m_values.size()))) * 2, 1, 40);
        m_width = hi > m_lo ? (hi - m_lo) / bins : 1;
        m_counts.assign(size_t(bins), 0);
        for (double v : m_values)
            ++m_counts[size_t(std::min(bins - 1, int((v - m_lo) / m_width)))];
    }
    update();
}

int StepHistogram::binAt(int x) const
{
    if (m_counts.empty())
        return -1;
    const double w = double(width() - 2 * kMargin) / double(m_counts.size());
    const int bin = int((x - kMargin) / w);
    return bin >= 0 && bin < int(m_counts.size()) ? bin : -1;
}

void StepHistogram::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    if (m_counts.empty()) {
        p.drawText(rect(), Qt::AlignCenter, tr("no decode steps"));
        return;
    }
    const int maxCount = *std::max_element(m_counts.begin(), m_counts.end());
    const double w = double(width() - 2 * kMargin) / double(m_counts.size());
    const int h = height() - kLabelHeight - kMargin;
    for (size_t i = 0; i < m_counts.size(); ++i) {
        const double bh = maxCount ? double(h - kMargin) * m_counts[i] / maxCount : 0;
        const bool slow = binLow(int(i)) > m_median * 1.2;
        p.fillRect(QRectF(kMargin + i * w + 1, h - bh, std::max(1.0, w - 2), bh),
            slow ? QColor(229, 57, 53) : QColor(66, 133, 244));
    }
    const double mx = kMargin + (m_median - m_lo) / m_width * w;
    p.setPen(QPen(QColor(33, 33, 33), 1, Qt::DashLine));
    p.drawLine(QPointF(mx, kMargin), QPointF(mx, h));
    p.setPen(palette().text().color());
    const QRect labels(kMargin, h + 1, width() - 2 * kMargin, kLabelHeight);
    p.drawText(labels, Qt::AlignLeft, QStringLiteral("%1 ms").arg(m_lo, 0, 'f', 2));
    p.drawText(labels, Qt::AlignHCenter, tr("median %1 ms (%2 steps)").arg(m_median, 0, 'f', 2).arg(m_values.size()));
    p.drawText(labels, Qt::AlignRight, QStringLiteral("%1 ms").arg(m_values.back(), 0, 'f', 2));
}

void StepHistogram::mousePressEvent(QMouseEvent* e)
{
    const int bin = binAt(int(e->position().x()));
    if (bin >= 0)
        emit binClicked(binLow(bin), binHigh(bin));
}

bool StepHistogram::event(QEvent* e)
{
    if (e->type() == QEvent::ToolTip) {
        auto* he = static_cast<QHelpEvent*>(e);
        const int bin = binAt(he->pos().x());
        if (bin >= 0)
            QToolTip::showText(he->globalPos(),
                tr("%1 steps between %2 and %3 ms")
                    .arg(count(bin))
                    .arg(binLow(bin), 0, 'f', 3)
                    .arg(binHigh(bin), 0, 'f', 3),
                this);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(e);
}
