// SPDX-License-Identifier: MIT
// Image export: the picture has the requested size, and lanes, waterfall bars, the annotation, the
// caption and the legend are where they should be (checked on pixels). Also the headless
// `gapscope FILE --export-png` entry point, run as a process without a display. And the Perfetto
// trace export, read back.
#include "views/annotations/annotationmodel.h"
#include "views/common/eventcolors.h"
#include "views/document/exportrenderer.h"
#include "views/document/tracedocument.h"
#include "views/document/workspace.h"
#include "views/timeline/lanelayout.h"
#include "views/timeline/timelinewidget.h"

#include "../format/perfettodecode.h"
#include "model/io/tracefile.h"
#include "testtrace.h"
#include "views/tables/statspanel.h"

#include <QFile>
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace gapscope::model;

class TstExport : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void pngHasLanesBarsAnnotation();
    void svgIsWritten();
    void badSizeIsRefused();
    void headlessProcess_data();
    void headlessProcess();
    void perfettoTrace();

private:
    QPoint eventPixel(const ExportRenderer::Layout& l, const TimelineView& v, LaneId lane, uint32_t index) const;
    std::shared_ptr<TraceDocument> m_doc;
    std::unique_ptr<Workspace> m_ws;
    QTemporaryDir m_dir;
};

void TstExport::initTestCase()
{
    m_doc = TraceDocument::fromTrace(testtrace::make(), QStringLiteral("test.gapscope"));
    m_ws = std::make_unique<Workspace>();
    m_ws->analysis()->setAsync(false);
    m_ws->resize(1400, 800);
    m_ws->setDocument(m_doc);
    // No budget: the bars are the measured time per class, so the measured total is wide enough to
    // find on the picture (the default GLM-5 budget would dwarf this tiny trace).
    m_ws->analysis()->setBudget(std::nullopt, true, QString());
    m_ws->analysis()->runNow();
    // A magenta note over kernels 1..2 of step 0 on rank 0's stream.
    gapscope::model::Annotation a;
    a.startNs = testtrace::kernelStart({}, 0, 1);
    a.endNs = testtrace::kernelStart({}, 0, 3);
    a.laneKey = m_doc->trace->lane(0).info.key();
    a.text = "look here";
    a.colorRgba = 0xff00ffff;
    m_ws->annotations()->add(a);
}

QPoint TstExport::eventPixel(const ExportRenderer::Layout& l, const TimelineView& v, LaneId lane, uint32_t index) const
{
    const LaneEvents& ev = m_doc->trace->lane(lane).events;
    const double x
        = l.timeline.left() + TimelineRenderer::kHeaderWidth + v.mapping.toX((ev.start(index) + ev.end(index)) / 2);
    const LaneRow& row = m_ws->timeline()->laneLayout().rows()[size_t(m_ws->timeline()->laneLayout().rowOfLane(lane))];
    const int y = l.timeline.top() + TimelineRenderer::widgetY(row.y + row.height / 2, v);
    return QPoint(int(x), y);
}

static bool near(QRgb a, QColor b, int tol = 6)
{
    return std::abs(qRed(a) - b.red()) <= tol && std::abs(qGreen(a) - b.green()) <= tol
        && std::abs(qBlue(a) - b.blue()) <= tol;
}

// Rows (y) of the rectangle where colour c appears.
static std::pair<int, int> rowsWith(const QImage& img, const QRect& r, const QColor& c)
{
    int lo = -1, hi = -1;
    for (int y = r.top(); y <= r.bottom(); ++y) {
        for (int x = r.left(); x <= r.right(); ++x) {
            if (near(img.pixel(x, y), c, 2)) {
                if (lo < 0)
                    lo = y;
                hi = y;
                break;
            }
        }
    }
    return { lo, hi };
}

void TstExport::pngHasLanesBarsAnnotation()
{
    const QSize size(1600, 900);
    const QString path = m_dir.filePath(QStringLiteral("out.png"));
    QCOMPARE(m_ws->exportImage(path, size, false), QString());
    QImage img(path);
    QCOMPARE(img.size(), size);
    const ExportScene scene = m_ws->exportScene();
    const ExportRenderer::Layout l = ExportRenderer::layoutFor(size, true);
    const TimelineView v = ExportRenderer::exportView(scene, size);
    // Caption band.
    QVERIFY(near(img.pixel(4, 4), QColor(38, 50, 56)));
    // Kernels in their lanes, in their component colour: the flash kernel (attention) of step 2 on both ranks.
    for (LaneId lane : { LaneId(0), m_doc->trace->lanesOf(1, LaneKind::GpuStream).front() }) {
        const uint32_t index = 2 * 8; // step 2, kernel 0
        const QPoint p = eventPixel(l, v, lane, index);
        const QColor expected = QColor::fromRgb(m_doc->colors->color(m_doc->trace->lane(lane).events.name(index)));
        QVERIFY2(near(img.pixel(p), expected),
            qPrintable(QStringLiteral("lane %1 at %2,%3: %4 vs %5")
                           .arg(lane)
                           .arg(p.x())
                           .arg(p.y())
                           .arg(QColor(img.pixel(p)).name(), expected.name())));
        // The idle stretch after the step's last kernel is background, not a kernel colour.
        const QPoint idle = eventPixel(l, v, lane, index + 7)
            + QPoint(int((testtrace::Options {}.kernelNs / 2 + 12'000) / v.mapping.nsPerPixel), 0);
        QVERIFY2(!near(img.pixel(idle), expected, 20), qPrintable(QColor(img.pixel(idle)).name()));
    }
    // The annotation: its left edge in magenta on rank 0's stream lane.
    const QRectF ar = [&] {
        TimelineRenderer r;
        r.setTrace(m_doc->trace.get(), &m_ws->timeline()->laneLayout(), m_doc->colors.get());
        r.setAnnotations(&m_ws->annotations()->annotations());
        return r.annotationRect(0, v, l.timeline.size());
    }();
    bool magenta = false;
    const int ay = l.timeline.top() + int(ar.center().y());
    for (int dx = -2; dx <= 2; ++dx)
        magenta |= near(img.pixel(int(ar.left()) + dx, ay + 4), QColor(255, 0, 255));
    QVERIFY2(magenta, "annotation edge not found");
    // Waterfall: the first bar is near the top, the measured total (dark red) at the bottom.
    const auto cols = scene.waterfall->columns();
    QVERIFY(cols.size() >= 3);
    const auto first = rowsWith(img, l.waterfall, cols.front().color);
    const auto measured = rowsWith(img, l.waterfall, cols.back().color);
    QVERIFY2(first.first >= 0 && measured.first >= 0, "waterfall bars not found");
    QVERIFY(first.second < measured.first);
    QVERIFY(measured.second < l.waterfall.bottom());
    // Legend: the first swatch has the first legend entry's colour.
    QVERIFY(near(img.pixel(l.legend.left() + 16, l.legend.center().y()),
        EventColors::componentColor(scene.waterfall->bars.front().name)));
}

void TstExport::svgIsWritten()
{
    const QString path = m_dir.filePath(QStringLiteral("out.svg"));
    QCOMPARE(m_ws->exportImage(path, QSize(1200, 700), true), QString());
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray svg = f.readAll();
    QVERIFY(svg.contains("<svg"));
    QVERIFY(svg.contains("width=\"1200\""));
    QVERIFY(svg.contains("look here")); // the annotation text
    QVERIFY(svg.contains("test.gapscope")); // the caption
}

void TstExport::badSizeIsRefused()
{
    const QString err = m_ws->exportImage(m_dir.filePath(QStringLiteral("tiny.png")), QSize(10, 10), false);
    QVERIFY(err.contains(QStringLiteral("10x10")));
}

void TstExport::headlessProcess_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QSize>("size");
    QTest::newRow("default size") << QStringList {} << QSize(1920, 1080);
    QTest::newRow("size and step") << QStringList { QStringLiteral("--size"), QStringLiteral("1000x600"),
        QStringLiteral("--step"), QStringLiteral("2") }
                                   << QSize(1000, 600);
    QTest::newRow("range") << QStringList { QStringLiteral("--range"), QStringLiteral("100us:250us"),
        QStringLiteral("--size"), QStringLiteral("800x500") }
                           << QSize(800, 500);
}

void TstExport::headlessProcess()
{
    QFETCH(QStringList, args);
    QFETCH(QSize, size);
    const QString exe = QStringLiteral(GAPSCOPE_BINARY_DIR "/app/gapscope");
    if (!QFile::exists(exe))
        QSKIP("the gapscope executable is not built");
    const QString trace = m_dir.filePath(QStringLiteral("h.gapscope"));
    if (!QFile::exists(trace))
        QVERIFY(writeTraceFile(testtrace::make(), trace.toStdString()));
    const QString out = m_dir.filePath(
        QStringLiteral("h-%1.png").arg(QTest::currentDataTag()).replace(QLatin1Char(' '), QLatin1Char('_')));
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("QT_QPA_PLATFORM")); // the program must go offscreen by itself
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    p.setProcessEnvironment(env);
    p.start(exe, QStringList { trace, QStringLiteral("--export-png"), out } + args);
    QVERIFY(p.waitForFinished(120'000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    QImage img(out);
    QCOMPARE(img.size(), size);
    QVERIFY(near(img.pixel(4, 4), QColor(38, 50, 56)));
}

// File > Export > Perfetto trace: the whole trace, then the selected steps only, with the edited
// annotation and the waterfall of the analysis that ran.
void TstExport::perfettoTrace()
{
    const Trace& t = *m_doc->trace;
    auto decode = [&](bool selected) {
        const QString path = m_dir.filePath(selected ? QStringLiteral("steps.pftrace") : QStringLiteral("all.pftrace"));
        const QString err = m_ws->exportPerfetto(path, selected);
        if (!err.isEmpty())
            qFatal("%s", qPrintable(err));
        auto d = gapscope::testing::decodePerfetto(gapscope::testing::readFile(path.toStdString()));
        if (!d || !d->problems.empty())
            qFatal("bad Perfetto trace");
        return std::move(d).value();
    };
    auto count = [](const gapscope::testing::DecodedTrace& d, const std::string& category, const std::string& name) {
        size_t n = 0;
        for (const auto& s : d.slices)
            n += (category.empty() || s.category == category) && (name.empty() || s.name == name);
        return n;
    };
    auto all = decode(false);
    QCOMPARE(count(all, "kernel", ""), size_t(t.eventCount(EventKind::Kernel)));
    QCOMPARE(count(all, "", "look here"), size_t(1));
    bool waterfall = false;
    for (const auto& [uuid, track] : all.tracks)
        waterfall |= track.name == "budget waterfall";
    QVERIFY(waterfall);
    emit m_ws->statsPanel()->stepsSelected(1, 1);
    auto one = decode(true);
    const size_t kernels = count(one, "kernel", "");
    QVERIFY(kernels > 0);
    QVERIFY(kernels < size_t(t.eventCount(EventKind::Kernel)) / 2);
}

QTEST_MAIN(TstExport)
#include "tst_export.moc"
