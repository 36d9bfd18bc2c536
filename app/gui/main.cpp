// SPDX-License-Identifier: MIT
// gapscope: the viewer. `gapscope [FILE...]` opens the window (the bundled sample when no file is
// given); `gapscope FILE --export-png OUT.png [--range A:B] [--step N] [--size WxH]` (and
// --export-svg; --export-html OUT.html: the report of `gapscope-cli report`) writes without a display and exits.

#include "app/gui/headlessexport.h"
#include "app/gui/mainwindow.h"
#include "model/format/memorybudget.h"
#include "views/document/tracedocument.h"

#include <QApplication>
#include <QSettings>
#include <QCommandLineParser>
#include <QTimer>

#include <cstdio>
#include <cstring>

namespace {

bool wantsExport(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        if (std::strncmp(argv[i], "--export-png", 12) == 0 || std::strncmp(argv[i], "--export-svg", 12) == 0
            || std::strncmp(argv[i], "--export-html", 13) == 0)
            return true;
    }
    return false;
}

int headless(const QCommandLineParser& p)
{
    HeadlessOptions o;
    o.files = p.positionalArguments();
    o.png = p.value(QStringLiteral("export-png"));
    o.svg = p.value(QStringLiteral("export-svg"));
    o.html = p.value(QStringLiteral("export-html"));
    o.range = p.value(QStringLiteral("range"));
    bool ok = true;
    if (p.isSet(QStringLiteral("step")))
        o.step = p.value(QStringLiteral("step")).toInt(&ok);
    if (ok && p.isSet(QStringLiteral("rank")))
        o.rank = p.value(QStringLiteral("rank")).toInt(&ok);
    if (ok && p.isSet(QStringLiteral("tp")))
        o.tp = p.value(QStringLiteral("tp")).toInt(&ok);
    if (!ok || o.step < -1 || o.rank < -1) {
        std::fprintf(stderr, "gapscope: --step, --rank and --tp take a non-negative integer\n");
        return 2;
    }
    if (p.isSet(QStringLiteral("size"))) {
        const auto size = headlessexport::parseSize(p.value(QStringLiteral("size")));
        if (!size) {
            std::fprintf(stderr, "gapscope: --size %s: expected WxH, e.g. 1920x1080\n",
                qPrintable(p.value(QStringLiteral("size"))));
            return 2;
        }
        o.size = *size;
    }
    o.model = p.value(QStringLiteral("model"));
    o.hardware = p.value(QStringLiteral("hw"));
    o.precision = p.value(QStringLiteral("precision"));
    if (p.isSet(QStringLiteral("cpu-lanes")))
        o.cpuLanes = p.value(QStringLiteral("cpu-lanes"));
    return headlessexport::run(o);
}

} // namespace

int main(int argc, char** argv)
{
    const bool exporting = wantsExport(argc, argv);
    if (exporting)
        qputenv("QT_QPA_PLATFORM", "offscreen"); // no display needed (set before QApplication exists)
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("gapscope"));
    QApplication::setOrganizationName(QStringLiteral("gapscope"));
    QApplication::setApplicationVersion(QStringLiteral(GAPSCOPE_VERSION));

    QCommandLineParser p;
    p.setApplicationDescription(
        QStringLiteral("Per-GPU decode-step timelines beside the theoretical budget's waterfall."));
    p.addHelpOption();
    p.addVersionOption();
    p.addPositionalArgument(
        QStringLiteral("FILE"), QStringLiteral("trace(s) to open: .gapscope, Kineto JSON, nsys SQLite"));
    p.addOptions({
        { QStringLiteral("export-png"), QStringLiteral("Write a PNG of the view and exit (no display needed)."),
            QStringLiteral("OUT.png") },
        { QStringLiteral("export-svg"), QStringLiteral("Write an SVG of the view and exit."),
            QStringLiteral("OUT.svg") },
        { QStringLiteral("export-html"),
            QStringLiteral("Write the HTML report (as gapscope-cli report) and exit (no display needed)."),
            QStringLiteral("OUT.html") },
        { QStringLiteral("range"),
            QStringLiteral("Export: time window A:B from the trace start (units ns/us/ms/s; default ms)."),
            QStringLiteral("A:B") },
        { QStringLiteral("step"), QStringLiteral("Export: show decode step N."), QStringLiteral("N") },
        { QStringLiteral("rank"), QStringLiteral("Export: waterfall of rank R (default: the critical rank)."),
            QStringLiteral("R") },
        { QStringLiteral("size"), QStringLiteral("Export: image size (default 1920x1080)."), QStringLiteral("WxH") },
        { QStringLiteral("model"), QStringLiteral("Export: budget model preset or config.json."),
            QStringLiteral("MODEL") },
        { QStringLiteral("hw"), QStringLiteral("Export: hardware preset, preset JSON or calibration profile."),
            QStringLiteral("HW") },
        { QStringLiteral("precision"), QStringLiteral("Export: precision spec, e.g. all=nvfp4,lm_head=bf16."),
            QStringLiteral("SPEC") },
        { QStringLiteral("tp"), QStringLiteral("Export: tensor-parallel degree of the budget."), QStringLiteral("N") },
        { QStringLiteral("cpu-lanes"),
            QStringLiteral("Export: open the CPU thread lanes of: first (default, the first rank that has them), "
                           "all, none, or ranks like 0,2."),
            QStringLiteral("WHICH") },
        { QStringLiteral("cache-mb"),
            QStringLiteral("How many MB of memory the part of a large trace read at once may take, with its "
                           "analysis (default: the viewer/cacheMb preference, else 1024); beyond that the "
                           "viewer draws the trace's overview."),
            QStringLiteral("MB") },
        { QStringLiteral("max-memory"),
            QStringLiteral("Memory budget for loading a trace (e.g. 8G, 512M; default 3/4 of RAM or of ulimit -v)."),
            QStringLiteral("SIZE") },
    });
    p.process(app);
    if (p.isSet(QStringLiteral("max-memory"))) {
        uint64_t bytes = 0;
        if (!gapscope::format::MemoryBudget::parse(p.value(QStringLiteral("max-memory")).toStdString(), bytes)) {
            std::fprintf(stderr, "gapscope: --max-memory %s: expected a size, e.g. 8G or 512M\n",
                qPrintable(p.value(QStringLiteral("max-memory"))));
            return 2;
        }
        gapscope::format::MemoryBudget::setLimit(bytes); // openTrace checks every load against it
    }
    {
        bool ok = true;
        const QString mb = p.isSet(QStringLiteral("cache-mb")) ? p.value(QStringLiteral("cache-mb"))
                                                               : QSettings().value(QStringLiteral("viewer/cacheMb")).toString();
        if (!mb.isEmpty()) {
            const qlonglong v = mb.toLongLong(&ok);
            if (!ok || v <= 0) {
                std::fprintf(stderr, "gapscope: --cache-mb %s: expected a positive number of MB\n", qPrintable(mb));
                return 2;
            }
            TraceDocument::setCacheBytes(uint64_t(v) << 20);
        }
    }
    if (exporting)
        return headless(p);

    MainWindow window;
    window.showAsRemembered();
    QStringList files = p.positionalArguments();
    if (files.isEmpty() && !MainWindow::samplePath().isEmpty())
        files << MainWindow::samplePath(); // the embedded default: the bundled sample, GLM-5 budget
    if (!files.isEmpty())
        QTimer::singleShot(0, &window, [&window, files] { window.openFiles(files); });
    return app.exec();
}
