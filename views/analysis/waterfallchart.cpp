// SPDX-License-Identifier: MIT
#include "views/analysis/waterfallchart.h"

#include "views/common/timeformat.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QGraphicsSimpleTextItem>
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
    m_columns = m_data.columns(m_hideEmpty);
    m_selected = -1;
    rebuild();
}

void WaterfallChart::setHideEmpty(bool on)
{
    if (on == m_hideEmpty)
        return;
    m_hideEmpty = on;
    setData(m_data);
}

namespace {

// Tags of the text items populate() adds to a chart (QGraphicsItem::data key 0).
enum TextTag { kRowLabel = 1, kValueLabel = 2 };
constexpr int kLabelGap = 6; // px between a label and the plot, and between a bar and its value

std::vector<QGraphicsSimpleTextItem*> taggedItems(const QChart* chart, TextTag tag)
{
    std::vector<std::pair<int, QGraphicsSimpleTextItem*>> found;
    for (QGraphicsItem* child : chart->childItems()) {
        if (child->data(0).toInt() == tag)
            found.emplace_back(child->data(1).toInt(), static_cast<QGraphicsSimpleTextItem*>(child));
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<QGraphicsSimpleTextItem*> out;
    for (const auto& f : found)
        out.push_back(f.second);
    return out;
}

// Puts the row labels left of the plot and each value beside its bar's end.
void placeTexts(QChart* c, const std::vector<WaterfallColumn>& columns)
{
    if (c->series().isEmpty())
        return;
    QAbstractSeries* series = c->series().first();
    const QRectF plot = c->plotArea();
    const int n = int(columns.size());
    const auto labels = taggedItems(c, kRowLabel);
    const auto values = taggedItems(c, kValueLabel);
    for (int i = 0; i < n && i < int(labels.size()) && i < int(values.size()); ++i) {
        const WaterfallColumn& col = columns[size_t(i)];
        const QPointF end = c->mapToPosition(QPointF(col.high, n - 1 - i), series);
        QGraphicsSimpleTextItem* label = labels[size_t(i)];
        const QRectF lr = label->boundingRect();
        label->setPos(plot.left() - kLabelGap - lr.width(), end.y() - lr.height() / 2);
        QGraphicsSimpleTextItem* value = values[size_t(i)];
        const QRectF vr = value->boundingRect();
        // Right of the bar; where that runs out of the plot, inside the bar when it is wide enough,
        // else left of it.
        const double start = c->mapToPosition(QPointF(std::max(0.0, col.low), n - 1 - i), series).x();
        const bool right = end.x() + kLabelGap + vr.width() <= plot.right();
        const bool inside = !right && end.x() - start >= vr.width() + 2 * kLabelGap;
        value->setBrush(inside ? QColor(Qt::white) : QColor(38, 50, 56));
        const double x = right ? end.x() + kLabelGap
            : inside           ? end.x() - kLabelGap - vr.width()
                               : std::max(plot.left(), start - kLabelGap - vr.width());
        value->setPos(x, end.y() - vr.height() / 2);
    }
}

} // namespace

std::vector<QGraphicsSimpleTextItem*> WaterfallChart::labelItems(const QChart* chart)
{
    return taggedItems(chart, kRowLabel);
}

std::vector<QGraphicsSimpleTextItem*> WaterfallChart::valueItems(const QChart* chart)
{
    return taggedItems(chart, kValueLabel);
}

std::vector<QBarSet*> WaterfallChart::populate(
    QChart* c, const std::vector<WaterfallColumn>& columns, const QString& title, int selectedBar)
{
    c->removeAllSeries();
    for (QAbstractAxis* a : c->axes()) {
        c->removeAxis(a);
        delete a;
    }
    for (QGraphicsItem* child : c->childItems()) {
        if (child->data(0).toInt() == kRowLabel || child->data(0).toInt() == kValueLabel)
            delete child;
    }
    QObject::disconnect(c, &QChart::plotAreaChanged, nullptr, nullptr);
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
    y->setLabelsVisible(false); // drawn below, never elided
    auto* x = new QValueAxis;
    x->setRange(0, hi > 0 ? hi * 1.12 : 1); // some room right of the longest bars for their values
    // The label column: as wide as the longest label; the chart's left margin makes the room.
    const QFontMetrics fm(y->labelsFont());
    int labelWidth = 0;
    for (int i = 0; i < n; ++i) {
        const WaterfallColumn& col = columns[size_t(i)];
        auto* label = new QGraphicsSimpleTextItem(col.label, c);
        label->setFont(y->labelsFont());
        label->setBrush(QColor(38, 50, 56));
        label->setData(0, kRowLabel);
        label->setData(1, i);
        label->setZValue(10);
        labelWidth = std::max(labelWidth, fm.horizontalAdvance(col.label));
        auto* value = new QGraphicsSimpleTextItem(timeformat::ms(col.value), c);
        value->setFont(y->labelsFont());
        value->setData(0, kValueLabel);
        value->setData(1, i);
        value->setZValue(10);
    }
    QMargins m = c->margins();
    m.setLeft(labelWidth + kLabelGap + 4);
    c->setMargins(m);
    QObject::connect(c, &QChart::plotAreaChanged, c, [c, columns] { placeTexts(c, columns); });
    x->setLabelFormat(QStringLiteral("%.1f"));
    x->setTitleText(QStringLiteral("ms per step"));
    c->addAxis(y, Qt::AlignLeft);
    c->addAxis(x, Qt::AlignBottom);
    series->attachAxis(y);
    series->attachAxis(x);
    placeTexts(c, columns);
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
