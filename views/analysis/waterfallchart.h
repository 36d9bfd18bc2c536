// SPDX-License-Identifier: MIT
#pragma once

// WaterfallChart: the budget waterfall drawn with Qt Charts, as horizontal floating bars (one row
// per column of WaterfallData: budget components, the budget total, gap bars, the measured total).
// Floating bars are a stacked series: a transparent "base" set plus one set per column holding
// that column's span (so every bar has its own colour). Hovering a bar shows its numbers; clicking
// it emits barClicked(bar index) so the timeline can light up its kernels and gaps.
//
// The row labels and the value of each bar are drawn by this class (text items on the chart, placed
// again whenever the plot area moves), not by the category axis, which elides them to "…" when the
// chart is narrow: the label column is as wide as the longest label at any size, and the value
// ("3.10 ms") stands beside its bar (inside it, in white, when the bar reaches the right edge).
// Bars that are zero in every step are left out while hideEmpty() is on (the default).
//
// Threading: GUI thread only.

#include "views/analysis/waterfalldata.h"

#include <QChartView>

class QBarSet;
class QChart;
class QGraphicsSimpleTextItem;

class WaterfallChart : public QChartView {
    Q_OBJECT
public:
    explicit WaterfallChart(QWidget* parent = nullptr);

    void setData(const WaterfallData& data);
    void setHideEmpty(bool on);
    bool hideEmpty() const { return m_hideEmpty; }
    const WaterfallData& data() const { return m_data; }
    const std::vector<WaterfallColumn>& columns() const { return m_columns; }
    // Marks a bar as selected (drawn with a dark outline); -1 clears.
    void setSelectedBar(int bar);
    int selectedBar() const { return m_selected; }
    // Centre of a column's bar in widget coordinates (tests and the export legend use it).
    QPointF columnCenter(int column) const;
    // Fills `chart` with the bars of `columns` (used by this view and by exports, which render a
    // chart without a view). Returns the series' bar sets, one per column.
    static std::vector<QBarSet*> populate(
        QChart* chart, const std::vector<WaterfallColumn>& columns, const QString& title, int selectedBar);
    // The row labels and value texts populate() put on `chart`, in column order.
    static std::vector<QGraphicsSimpleTextItem*> labelItems(const QChart* chart);
    static std::vector<QGraphicsSimpleTextItem*> valueItems(const QChart* chart);
    // Text shown when hovering column `column`.
    QString columnToolTip(int column) const;

signals:
    void barClicked(int bar);
    void totalClicked(bool measured);

private:
    void rebuild();
    void onHovered(bool on, int category);
    void onClicked(int category);

    WaterfallData m_data;
    std::vector<WaterfallColumn> m_columns;
    std::vector<QBarSet*> m_sets; // per column
    int m_selected = -1;
    bool m_hideEmpty = true;
};
