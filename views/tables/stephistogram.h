// SPDX-License-Identifier: MIT
#pragma once

// StepHistogram: a small histogram of decode-step times (one value per step, e.g. its slowest
// rank), with the median marked, so outliers stand out. Clicking a bin emits binClicked with its
// range so the step table can select those steps.
//
// Threading: GUI thread.

#include <QWidget>

#include <vector>

class StepHistogram : public QWidget {
    Q_OBJECT
public:
    explicit StepHistogram(QWidget* parent = nullptr);

    void setValues(std::vector<double> ms);
    // Bin edges and counts (tests and tooltips read them).
    int binCount() const { return int(m_counts.size()); }
    int count(int bin) const { return m_counts[size_t(bin)]; }
    double binLow(int bin) const { return m_lo + bin * m_width; }
    double binHigh(int bin) const { return m_lo + (bin + 1) * m_width; }
    int binAt(int x) const;
    QSize sizeHint() const override { return { 320, 90 }; }

signals:
    void binClicked(double loMs, double hiMs);

protected:
    void paintEvent(QPaintEvent* e) override;
    void mousePressEvent(QMouseEvent* e) override;
    bool event(QEvent* e) override;

private:
    std::vector<double> m_values;
    std::vector<int> m_counts;
    double m_lo = 0, m_width = 1, m_median = 0;
};
