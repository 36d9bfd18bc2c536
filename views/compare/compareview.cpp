// SPDX-License-Identifier: MIT
#include "views/compare/compareview.h"
#include "views/compare/bardiffmodel.h"
#include "views/compare/kerneldiffmodel.h"
#include "views/compare/stepdiffmodel.h"
#include "views/compare/stepoverlay.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHorizontalBarSeries>
#include <QImage>
#include <QImageWriter>
#include <QLabel>
#include <QPainter>
#include <QScrollArea>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QSvgGenerator>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

using gapscope::model::TraceDiff;

namespace {

QTableView* makeTable(QAbstractItemModel* model, QWidget* parent)
{
    auto* proxy = new QSortFilterProxyModel(parent);
    proxy->setSourceModel(model);
    proxy->setSortRole(Qt::UserRole);
    auto* view = new QTableView(parent);
    view->setModel(proxy);
    view->setSortingEnabled(true);
    view->sortByColumn(-1, Qt::AscendingOrder); // the model's order (largest change first)
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->verticalHeader()->hide();
    view->horizontalHeader()->setStretchLastSection(true);
    return view;
}

QString signedMs(double ms)
{
    return (ms > 0.0005 ? QStringLiteral("+") : QString()) + QString::number(ms, 'f', 3) + QStringLiteral(" ms");
}

} // namespace

CompareView::CompareView(QWidget* parent)
    : QWidget(parent)
    , m_summary(new QLabel(this))
    , m_which(new QComboBox(this))
    , m_tabs(new QTabWidget(this))
    , m_chart(new QChartView(this))
    , m_bars(new BarDiffModel(this))
    , m_kernels(new KernelDiffModel(this))
    , m_steps(new StepDiffModel(this))
    , m_rankPair(new QComboBox(this))
    , m_step(new QSpinBox(this))
    , m_overlay(new StepOverlay(this))
{
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_which->addItems({ tr("median step"), tr("mean step") });
    auto* top = new QHBoxLayout;
    top->addWidget(m_summary, 1);
    top->addWidget(new QLabel(tr("Waterfall of the"), this));
    top->addWidget(m_which);

    auto* waterfall = new QSplitter(Qt::Vertical, this);
    m_chart->setRenderHint(QPainter::Antialiasing);
    waterfall->addWidget(m_chart);
    waterfall->addWidget(makeTable(m_bars, this));
    m_tabs->insertTab(WaterfallTab, waterfall, tr("Waterfall A/B"));
    auto* kernels = makeTable(m_kernels, this);
    kernels->setColumnHidden(KernelDiffModel::FullName, true);
    m_tabs->insertTab(KernelsTab, kernels, tr("Kernels A/B"));
    auto* steps = makeTable(m_steps, this);
    m_tabs->insertTab(StepsTab, steps, tr("Steps A/B"));
    auto* timeline = new QWidget(this);
    auto* tl = new QVBoxLayout(timeline);
    auto* pick = new QHBoxLayout;
    pick->addWidget(new QLabel(tr("Ranks"), timeline));
    pick->addWidget(m_rankPair);
    pick->addWidget(new QLabel(tr("Step"), timeline));
    pick->addWidget(m_step);
    pick->addStretch(1);
    tl->addLayout(pick);
    auto* scroll = new QScrollArea(timeline);
    scroll->setWidgetResizable(true);
    scroll->setWidget(m_overlay);
    tl->addWidget(scroll, 1);
    m_tabs->insertTab(TimelineTab, timeline, tr("Timeline A over B"));

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_tabs, 1);

    connect(m_which, &QComboBox::currentIndexChanged, this,
        [this](int i) { showWaterfall(i == 1 ? Which::Mean : Which::Median); });
    connect(m_rankPair, &QComboBox::currentIndexChanged, this, &CompareView::updateOverlay);
    connect(m_step, &QSpinBox::valueChanged, this, &CompareView::updateOverlay);
    connect(steps, &QTableView::doubleClicked, this, [this, steps](const QModelIndex& index) {
        const QModelIndex source = static_cast<QSortFilterProxyModel*>(steps->model())->mapToSource(index);
        showStep(m_steps->stepIndex(source.row()), m_rankPair->currentIndex());
    });
}

CompareView::~CompareView() = default;

void CompareView::setComparison(std::shared_ptr<const Comparison> comparison)
{
    m_comparison = std::move(comparison);
    const TraceDiff* diff = m_comparison ? m_comparison->diff.get() : nullptr;
    m_kernels->setKernels(diff ? diff->kernels() : std::vector<TraceDiff::KernelDelta> {});
    m_steps->setDiff(diff);
    {
        const QSignalBlocker block(m_rankPair);
        m_rankPair->clear();
        if (diff)
            for (const auto& r : diff->ranks())
                m_rankPair->addItem(QStringLiteral("A %1 / B %2")
                                        .arg(r.a.present ? QString::number(r.a.rank) : QStringLiteral("–"),
                                            r.b.present ? QString::number(r.b.rank) : QStringLiteral("–")));
    }
    {
        const QSignalBlocker block(m_step);
        const bool common = diff && diff->steps().common;
        m_step->setRange(common ? int(diff->steps().first) : 0, common ? int(diff->steps().last) : 0);
        if (common && diff->median().valid)
            m_step->setValue(int(diff->median().aSteps[0].second));
    }
    m_summary->setText(summary());
    showWaterfall(m_which->currentIndex() == 1 ? Which::Mean : Which::Median);
    updateOverlay();
}

QString CompareView::summary() const
{
    if (!m_comparison)
        return tr("Nothing compared");
    const TraceDiff& d = *m_comparison->diff;
    QStringList parts;
    parts << tr("A: %1 · B: %2").arg(m_comparison->a->displayName(), m_comparison->b->displayName());
    if (d.steps().common)
        parts << tr("steps %1 to %2 (%3 in common)").arg(d.steps().first).arg(d.steps().last).arg(d.steps().common);
    if (d.median().valid)
        parts << tr("median step %1 → %2 ms (%3)")
                     .arg(d.median().aMeasuredNs / 1e6, 0, 'f', 3)
                     .arg(d.median().bMeasuredNs / 1e6, 0, 'f', 3)
                     .arg(signedMs(d.median().deltaNs() / 1e6));
    QString text = parts.join(QStringLiteral(" · "));
    for (const auto& p : d.problems())
        text += QStringLiteral("\n") + tr("not compared: %1").arg(QString::fromStdString(p.message()));
    return text;
}

void CompareView::showWaterfall(Which which)
{
    if (m_which->currentIndex() != int(which)) {
        const QSignalBlocker block(m_which);
        m_which->setCurrentIndex(int(which));
    }
    const TraceDiff* diff = m_comparison ? m_comparison->diff.get() : nullptr;
    m_bars->setWaterfall(diff ? (which == Which::Mean ? diff->mean() : diff->median()) : TraceDiff::Waterfall {});
    rebuildChart();
}

void CompareView::rebuildChart()
{
    auto* chart = new QChart;
    const TraceDiff::Waterfall& w = m_bars->waterfall();
    if (w.valid) {
        auto* a = new QBarSet(QStringLiteral("A"));
        auto* b = new QBarSet(QStringLiteral("B"));
        a->setColor(QColor(150, 150, 150));
        b->setColor(QColor(40, 110, 200));
        QStringList names;
        double low = 0, high = 0;
        // Horizontal bars are drawn from the bottom: the largest change goes last, so it is on top.
        for (auto it = w.bars.rbegin(); it != w.bars.rend(); ++it) {
            names << QStringLiteral("%1 (%2)").arg(QString::fromStdString(it->name), signedMs(it->deltaNs() / 1e6));
            *a << it->aNs / 1e6;
            *b << it->bNs / 1e6;
            low = std::min({ low, it->aNs / 1e6, it->bNs / 1e6 });
            high = std::max({ high, it->aNs / 1e6, it->bNs / 1e6 });
        }
        auto* series = new QHorizontalBarSeries;
        series->append(a);
        series->append(b);
        chart->addSeries(series);
        auto* categories = new QBarCategoryAxis;
        categories->append(names);
        chart->addAxis(categories, Qt::AlignLeft);
        series->attachAxis(categories);
        auto* values = new QValueAxis;
        values->setRange(low, high > low ? high * 1.05 : low + 1);
        values->setTitleText(tr("ms"));
        chart->addAxis(values, Qt::AlignBottom);
        series->attachAxis(values);
        chart->setTitle(m_which->currentIndex() == 1 ? tr("mean step, A and B") : tr("median step, A and B"));
    } else {
        chart->setTitle(tr("no steps in common: no waterfall to compare"));
    }
    QChart* old = m_chart->chart();
    m_chart->setChart(chart);
    delete old;
}

void CompareView::showStep(uint32_t index, int rankPair)
{
    m_tabs->setCurrentIndex(TimelineTab);
    {
        const QSignalBlocker b1(m_step), b2(m_rankPair);
        m_step->setValue(int(index));
        if (rankPair >= 0 && rankPair < m_rankPair->count())
            m_rankPair->setCurrentIndex(rankPair);
    }
    updateOverlay();
}

void CompareView::updateOverlay()
{
    if (!m_comparison) {
        m_overlay->setData({});
        return;
    }
    m_overlay->setData(StepOverlayData::make(
        *m_comparison, size_t(std::max(0, m_rankPair->currentIndex())), uint32_t(m_step->value())));
}

QString CompareView::exportImage(const QString& path, const QSize& size, bool svg)
{
    if (size.width() < 320 || size.height() < 200 || size.width() > 16384 || size.height() > 16384)
        return QStringLiteral("%1: size %2x%3 is outside 320x200 .. 16384x16384")
            .arg(path)
            .arg(size.width())
            .arg(size.height());
    // Lay the view out at the export size when it is not on screen; else scale what is shown.
    const bool shown = isVisible();
    const QSize before = this->size();
    if (!shown)
        resize(size);
    auto paint = [&](QPainter& p) {
        p.fillRect(QRect(QPoint(0, 0), size), Qt::white);
        const QSize s = this->size();
        const double scale = std::min(double(size.width()) / s.width(), double(size.height()) / s.height());
        p.scale(scale, scale);
        render(&p, QPoint(), QRegion(), QWidget::DrawChildren);
    };
    QString error;
    if (svg) {
        QSvgGenerator gen;
        gen.setFileName(path);
        gen.setSize(size);
        gen.setViewBox(QRect(QPoint(0, 0), size));
        gen.setTitle(summary());
        gen.setDescription(QStringLiteral("gapscope comparison of two traces"));
        QPainter p;
        if (!p.begin(&gen))
            error = QStringLiteral("%1: cannot write the SVG file").arg(path);
        else {
            paint(p);
            p.end();
            if (!QFileInfo(path).exists() || QFileInfo(path).size() == 0)
                error = QStringLiteral("%1: cannot write the SVG file").arg(path);
        }
    } else {
        QImage img(size, QImage::Format_ARGB32_Premultiplied);
        {
            QPainter p(&img);
            paint(p);
        }
        QImageWriter w(path, "png");
        if (!w.write(img))
            error = QStringLiteral("%1: %2").arg(path, w.errorString());
    }
    if (!shown)
        resize(before);
    return error;
}
