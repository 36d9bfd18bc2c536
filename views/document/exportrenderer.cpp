// SPDX-License-Identifier: MIT
#include "views/document/exportrenderer.h"

#include "views/analysis/waterfallchart.h"
#include "views/common/eventcolors.h"
#include "views/common/timeformat.h"
#include "views/timeline/lanelayout.h"

#include <QChart>
#include <QFileInfo>
#include <QGraphicsScene>
#include <QImage>
#include <QImageWriter>
#include <QPainter>
#include <QSvgGenerator>

#include <set>

namespace {
constexpr int kCaptionHeight = 44;
constexpr int kLegendHeight = 30;
}

QString ExportCaption::firstLine() const
{
    QStringList parts;
    if (!trace.isEmpty())
        parts << trace;
    if (!steps.isEmpty())
        parts << steps;
    return parts.join(QStringLiteral("  ·  "));
}

QString ExportCaption::secondLine() const
{
    QStringList parts;
    if (!model.isEmpty() || !hardware.isEmpty())
        parts << (hardware.isEmpty() ? model : model.isEmpty() ? hardware : model + QStringLiteral(" on ") + hardware);
    auto total = [](const char* what, double ms) {
        return QStringLiteral("%1 %2/step (%3 tok/s)")
            .arg(QLatin1String(what), timeformat::ms(ms, 2))
            .arg(ms > 0 ? 1000 / ms : 0, 0, 'f', 1);
    };
    if (budgetMs >= 0)
        parts << total("budget", budgetMs);
    if (measuredMs >= 0)
        parts << total("measured", measuredMs);
    return parts.join(QStringLiteral("  ·  "));
}

QString ExportCaption::text() const
{
    const QString a = firstLine(), b = secondLine();
    return a.isEmpty() ? b : b.isEmpty() ? a : a + QStringLiteral("  ·  ") + b;
}

ExportRenderer::Layout ExportRenderer::layoutFor(const QSize& size, bool withWaterfall)
{
    Layout l;
    const int w = size.width(), h = size.height();
    l.caption = QRect(0, 0, w, kCaptionHeight);
    l.legend = QRect(0, h - kLegendHeight, w, kLegendHeight);
    const int bodyTop = kCaptionHeight, bodyHeight = std::max(0, h - kCaptionHeight - kLegendHeight);
    const int waterfallWidth = withWaterfall ? std::clamp(w * 30 / 100, 280, std::max(280, w / 2)) : 0;
    l.timeline = QRect(0, bodyTop, std::max(0, w - waterfallWidth), bodyHeight);
    if (withWaterfall)
        l.waterfall = QRect(l.timeline.right() + 1, bodyTop, waterfallWidth, bodyHeight);
    return l;
}

TimelineView ExportRenderer::exportView(const ExportScene& scene, const QSize& size)
{
    const Layout l = layoutFor(size, scene.waterfall != nullptr);
    TimelineView v = scene.view;
    const int plotWidth = std::max(1, l.timeline.width() - v.headerWidth);
    v.mapping = v.mapping.width > 0 ? v.mapping.resized(plotWidth) : v.mapping;
    v.mapping.width = plotWidth;
    v.hovered = {};
    return v;
}

void ExportRenderer::render(QPainter& p, const QSize& size, const ExportScene& scene)
{
    const Layout l = layoutFor(size, scene.waterfall != nullptr);
    p.fillRect(QRect(QPoint(0, 0), size), Qt::white);
    paintCaption(p, l.caption, scene.caption);
    if (scene.trace && scene.layout) {
        TimelineRenderer timeline;
        timeline.setTrace(scene.trace, scene.layout, scene.colors);
        timeline.setOverview(scene.overview, scene.window);
        timeline.setHighlight(scene.highlight);
        timeline.setAnnotations(scene.annotations);
        p.save();
        p.translate(l.timeline.topLeft());
        p.setClipRect(QRect(QPoint(0, 0), l.timeline.size()));
        timeline.paint(p, l.timeline.size(), exportView(scene, size));
        p.restore();
    }
    if (scene.waterfall)
        paintWaterfall(p, l.waterfall, scene);
    paintLegend(p, l.legend, scene);
}

void ExportRenderer::paintCaption(QPainter& p, const QRect& r, const ExportCaption& c)
{
    p.fillRect(r, QColor(38, 50, 56));
    QFont f = p.font();
    f.setPixelSize(14);
    f.setBold(true);
    p.setFont(f);
    p.setPen(Qt::white);
    const QRect text = r.adjusted(12, 3, -12, -3);
    const int half = text.height() / 2;
    p.drawText(QRect(text.left(), text.top(), text.width(), half), Qt::AlignVCenter | Qt::AlignLeft,
        p.fontMetrics().elidedText(c.firstLine(), Qt::ElideRight, text.width()));
    f.setBold(false);
    f.setPixelSize(13);
    p.setFont(f);
    p.drawText(QRect(text.left(), text.top() + half, text.width(), text.height() - half),
        Qt::AlignVCenter | Qt::AlignLeft, p.fontMetrics().elidedText(c.secondLine(), Qt::ElideRight, text.width()));
    f.setPixelSize(12);
    p.setFont(f);
}

void ExportRenderer::paintWaterfall(QPainter& p, const QRect& r, const ExportScene& scene)
{
    if (r.isEmpty())
        return;
    // A chart without a view: a scene holding a QChart, rendered into the target rectangle.
    QGraphicsScene gs;
    auto* chart = new QChart;
    chart->legend()->hide();
    chart->setBackgroundRoundness(0);
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->setAnimationOptions(QChart::NoAnimation);
    gs.addItem(chart);
    WaterfallChart::populate(chart, scene.waterfall->columns(true), scene.waterfall->title, scene.selectedBar);
    chart->setGeometry(QRectF(0, 0, r.width(), r.height()));
    gs.setSceneRect(0, 0, r.width(), r.height());
    p.save();
    p.setRenderHint(QPainter::Antialiasing, true);
    gs.render(&p, QRectF(r), QRectF(0, 0, r.width(), r.height()));
    p.restore();
    p.setPen(QColor(190, 195, 205));
    p.drawLine(r.topLeft(), r.bottomLeft());
}

void ExportRenderer::paintLegend(QPainter& p, const QRect& r, const ExportScene& scene)
{
    p.fillRect(r, QColor(245, 246, 248));
    std::vector<std::pair<QString, QColor>> names;
    std::set<QString> seen;
    auto add = [&](const QString& n, const QColor& color) {
        if (!n.isEmpty() && seen.insert(n).second)
            names.emplace_back(n, color);
    };
    if (scene.waterfall) {
        for (const auto& b : scene.waterfall->bars) {
            if (b.kind != WaterfallBar::Kind::Gap)
                add(b.name, EventColors::barColor(b.id, b.className));
        }
        for (const auto& b : scene.waterfall->bars) {
            if (b.kind == WaterfallBar::Kind::Gap && b.id != gapscope::model::BarId::ClassInefficiency)
                add(b.name, EventColors::barColor(b.id, b.className));
        }
    } else if (scene.colors) {
        for (const auto& c : scene.colors->components())
            add(c, EventColors::componentColor(c));
    }
    QFont f = p.font();
    f.setPixelSize(12);
    p.setFont(f);
    const QFontMetrics fm(f);
    int x = r.left() + 10;
    const int y = r.top() + (r.height() - 12) / 2;
    for (const auto& [n, color] : names) {
        const int w = 16 + fm.horizontalAdvance(n) + 14;
        if (x + w > r.right())
            break;
        p.fillRect(QRect(x, y, 12, 12), color);
        p.setPen(QColor(33, 33, 33));
        p.drawText(QRect(x + 16, r.top(), w, r.height()), Qt::AlignVCenter | Qt::AlignLeft, n);
        x += w;
    }
    if (scene.annotations && !scene.annotations->empty() && x + 120 < r.right()) {
        p.fillRect(QRect(x, y, 3, 12), QColor(255, 160, 0));
        p.drawText(
            QRect(x + 8, r.top(), 120, r.height()), Qt::AlignVCenter | Qt::AlignLeft, QStringLiteral("annotation"));
    }
}

QString ExportRenderer::savePng(const QString& path, const QSize& size, const ExportScene& scene)
{
    if (size.width() < 320 || size.height() < 200 || size.width() > 16384 || size.height() > 16384)
        return QStringLiteral("%1: size %2x%3 is outside 320x200 .. 16384x16384")
            .arg(path)
            .arg(size.width())
            .arg(size.height());
    QImage img(size, QImage::Format_ARGB32_Premultiplied);
    img.fill(Qt::white);
    {
        QPainter p(&img);
        render(p, size, scene);
    }
    QImageWriter w(path, "png");
    if (!w.write(img))
        return QStringLiteral("%1: %2").arg(path, w.errorString());
    return {};
}

QString ExportRenderer::saveSvg(const QString& path, const QSize& size, const ExportScene& scene)
{
    if (size.width() < 320 || size.height() < 200 || size.width() > 16384 || size.height() > 16384)
        return QStringLiteral("%1: size %2x%3 is outside 320x200 .. 16384x16384")
            .arg(path)
            .arg(size.width())
            .arg(size.height());
    QSvgGenerator gen;
    gen.setFileName(path);
    gen.setSize(size);
    gen.setViewBox(QRect(QPoint(0, 0), size));
    gen.setTitle(scene.caption.text());
    gen.setDescription(QStringLiteral("gapscope timeline and budget waterfall"));
    QPainter p;
    if (!p.begin(&gen))
        return QStringLiteral("%1: cannot write the SVG file").arg(path);
    render(p, size, scene);
    p.end();
    if (!QFileInfo(path).exists() || QFileInfo(path).size() == 0)
        return QStringLiteral("%1: cannot write the SVG file").arg(path);
    return {};
}
