// SPDX-License-Identifier: MIT
#include "views/waterfallchart.h"

#include "views/timeformat.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QHorizontalStackedBarSeries>
#include <QToolTip>
#include <QValueAxis>

#include <algorithm>

WaterfallChart::WaterfallChart(QWidget* parent)
    : QChartView(new QChart, parent)
{
    setRenderHint(QPainter::Antialiasing, true);
    chart()->legend()->hide();
    chart()->setMargins(QMargins(4, 4, 4, 4));
    chart()->setBackgroundRoundness(0);
    chart()->setAnimationOptions(QChart::NoAnimation);
    setMinimumSize(260, 240);
    setMouseTracking(true);
}

void WaterfallChart::setData(const WaterfallData& data)
{
    m_data = data;
    m_columns = m_data.columns();
    m_selected = -1;
    rebuild();
}

std::vector<QBarSet*> WaterfallChart::populate(
    QChart* c, const std::vector<WaterfallColumn>& columns, const QString& title, int selectedBar)
{
    c->removeAllSeries();
    for (QAbstractAxis* a : c->axes()) {
        c->removeAxis(a);
        delete a;
    }
    c->setTitle(title);
    std::vector<QBarSet*> sets;
    const int n = int(columns.size());
    if (n == 0)
        return sets;
    // Categories are listed bottom-up by Qt; reverse so the first bar is on top.
    auto row = [n](int column) { return n - 1 - column; };
    auto* series = new QHorizontalStackedBarSeries;
    series->setBarWidth(0.75);
    auto* base = new QBarSet(QStringLiteral("base"));
    base->setColor(Qt::transparent);
    base->setBorderColor(Qt::transparent);
    QList<qreal> baseValues(n, 0);
    for (int i = 0; i < n; ++i)
        baseValues[row(i)] = std::max(0.0, columns[size_t(i)].low);
    base->append(baseValues);
    series->append(base);
    double hi = 0;
    for (int i = 0; i < n; ++i) {
        const WaterfallColumn& col = columns[size_t(i)];
        auto* set = new QBarSet(col.label);
        QList<qreal> values(n, 0);
        values[row(i)] = col.high - std::max(0.0, col.low);
        set->append(values);
        set->setColor(col.color);
        const bool sel = selectedBar >= 0 && col.bar == selectedBar;
        QPen pen(sel ? QColor(Qt::black) : col.color.darker(130), sel ? 2.5 : 1.0);
        set->setPen(pen);
        series->append(set);
        sets.push_back(set);
        hi = std::max(hi, col.high);
    }
    c->addSeries(series);
    QStringList categories;
    for (int i = n - 1; i >= 0; --i)
        categories << columns[size_t(i)].label;
    auto* y = new QBarCategoryAxis;
    y->append(categories);
    auto* x = new QValueAxis;
    x->setRange(0, hi > 0 ? hi * 1.05 : 1);
    x->setLabelFormat(QStringLiteral("%.1f"));
    x->setTitleText(QStringLiteral("ms per step"));
    c->addAxis(y, Qt::AlignLeft);
    c->addAxis(x, Qt::AlignBottom);
    series->attachAxis(y);
    series->attachAxis(x);
    return sets;
}

void WaterfallChart::rebuild()
{
    m_sets = populate(chart(), m_columns, m_data.title, m_selected);
    if (chart()->series().isEmpty())
        return;
    auto* series = static_cast<QHorizontalStackedBarSeries*>(chart()->series().first());
    const int n = int(m_columns.size());
    auto row = [n](int index) { return n - 1 - index; };
    connect(series, &QHorizontalStackedBarSeries::hovered, this,
        [this, row](bool on, int index, QBarSet*) { onHovered(on, row(index)); });
    connect(series, &QHorizontalStackedBarSeries::clicked, this,
        [this, row](int index, QBarSet*) { onClicked(row(index)); });
}

QString WaterfallChart::columnToolTip(int column) const
{
    if (column < 0 || column >= int(m_columns.size()))
        return {};
    const WaterfallColumn& c = m_columns[size_t(column)];
    QString text = QStringLiteral("<b>%1</b><br>%2").arg(c.label.toHtmlEscaped(), timeformat::ms(c.value));
    const double measured = m_data.barsTotalMs();
    if (measured > 0)
        text += QStringLiteral(" (%1% of measured)").arg(100.0 * c.value / measured, 0, 'f', 1);
    if (c.total) {
        text += QStringLiteral("<br>%1 tok/s per sequence").arg(c.value > 0 ? 1000.0 / c.value : 0.0, 0, 'f', 1);
    } else {
        text += QStringLiteral("<br>from %1 to %2").arg(timeformat::ms(c.low), timeformat::ms(c.high));
        const QString& detail = m_data.bars[size_t(c.bar)].detail;
        if (!detail.isEmpty())
            text += QStringLiteral("<br>") + detail.toHtmlEscaped();
        text += QStringLiteral("<br><i>click to light up on the timeline</i>");
    }
    return text;
}

void WaterfallChart::onHovered(bool on, int column)
{
    if (on)
        QToolTip::showText(QCursor::pos() + QPoint(12, 12), columnToolTip(column), this);
    else
        QToolTip::hideText();
}

void WaterfallChart::onClicked(int column)
{
    if (column < 0 || column >= int(m_columns.size()))
        return;
    const WaterfallColumn& c = m_columns[size_t(column)];
    if (c.total) {
        emit totalClicked(c.label == QLatin1String("measured"));
        return;
    }
    setSelectedBar(c.bar);
    emit barClicked(c.bar);
}

void WaterfallChart::setSelectedBar(int bar)
{
    m_selected = bar;
    for (size_t i = 0; i < m_sets.size(); ++i) {
        const bool sel = bar >= 0 && m_columns[i].bar == bar;
        m_sets[i]->setPen(QPen(sel ? QColor(Qt::black) : m_columns[i].color.darker(130), sel ? 2.5 : 1.0));
    }
}

QPointF WaterfallChart::columnCenter(int column) const
{
    if (column < 0 || column >= int(m_columns.size()) || chart()->series().isEmpty())
        return {};
    const WaterfallColumn& c = m_columns[size_t(column)];
    const int row = int(m_columns.size()) - 1 - column;
    const QPointF scene
        = chart()->mapToPosition(QPointF((std::max(0.0, c.low) + c.high) / 2, row), chart()->series().first());
    return mapFromScene(scene);
}
