// SPDX-License-Identifier: MIT
#include "views/tracedocument.h"

#include "model/format/memorybudget.h"
#include "model/format/regularfile.h"
#include "model/format/tracereader.h"
#include "model/kernelclassifier.h"
#include "model/open/traceopen.h"
#include "views/annotationstore.h"

#include <QElapsedTimer>
#include <QFileInfo>

#include <atomic>

using namespace gapscope::model;

namespace {

// What prepare() leaves in LoadedTrace::extra.
struct Derived {
    std::shared_ptr<const EventColors> colors;
    std::shared_ptr<const TraceOverview> overview;
    std::shared_ptr<const gapscope::format::TraceReader> reader;
    TimeWindow window;
};

// What the open function of a large file hands to the prepare function (the same load).
struct LargeOpen {
    std::shared_ptr<const TraceOverview> overview;
    std::shared_ptr<const gapscope::format::TraceReader> reader;
    TimeWindow window;
};

std::atomic<uint64_t> g_cacheBytes { uint64_t(1) << 30 };
std::atomic<uint64_t> g_largeEvents { kLargeTraceEvents };

// What an event of a window costs the viewer, resident: its columns and summaries, the gap analysis
// and host attribution of it (a gap record per kernel), the tables. Measured with bench_large in full
// mode as the slope between a 1.3M- and a 3.9M-event synth trace (187 B/event after the open, 184 at
// the peak), rounded up.
constexpr uint64_t kWindowBytesPerEvent = 192;

// The first window of a large file shows at once: a few million events (well inside the cache).
constexpr uint64_t kFirstWindowEvents = 2'000'000;

KernelClassifier classifierOf(const Trace& trace)
{
    if (const auto& table = trace.classifierTable()) {
        if (auto c = KernelClassifier::fromTable(*table))
            return std::move(*c);
    }
    return KernelClassifier::builtinDefault();
}

Derived derive(const Trace& trace)
{
    const KernelClassifier classifier = classifierOf(trace);
    auto colors = std::make_shared<EventColors>();
    colors->build(trace, [&classifier](std::string_view name) {
        const int c = classifier.classify(name);
        return c >= 0 ? classifier.classes()[size_t(c)].name : std::string();
    });
    Derived d;
    d.colors = std::move(colors);
    return d;
}

} // namespace

QString TraceDocument::displayName() const
{
    if (paths.isEmpty())
        return QStringLiteral("(untitled)");
    QString name = QFileInfo(paths.first()).fileName();
    if (paths.size() > 1)
        name += QStringLiteral(" (+%1 files)").arg(paths.size() - 1);
    return name;
}

QString TraceDocument::gpuName() const
{
    if (!trace || trace->header().gpus.empty())
        return {};
    return QString::fromStdString(trace->header().gpus[0].name);
}

uint64_t TraceDocument::cacheBytes()
{
    return g_cacheBytes.load();
}

void TraceDocument::setCacheBytes(uint64_t bytes)
{
    g_cacheBytes.store(std::max<uint64_t>(bytes, 1u << 20));
}

uint64_t TraceDocument::largeTraceEvents()
{
    return g_largeEvents.load();
}

void TraceDocument::setLargeTraceEvents(uint64_t events)
{
    g_largeEvents.store(std::max<uint64_t>(events, 1));
}

uint64_t TraceDocument::windowEvents()
{
    return cacheBytes() / kWindowBytesPerEvent;
}

std::pair<TraceOpener::OpenFn, TraceOpener::PrepareFn> TraceDocument::loader(
    const QStringList& paths, const QString& stepRule)
{
    std::vector<std::string> files;
    for (const QString& p : paths)
        files.push_back(p.toStdString());
    auto large = std::make_shared<LargeOpen>();
    TraceOpener::OpenFn open = [files, large, asked = stepRule.toStdString(), first = paths.value(0)](
                                   const TraceOpener::Progress& progress) -> gapscope::Expected<Trace> {
        ReadOptions options;
        options.progress = progress;
        // The rule asked for, else the one saved in the annotations' sidecar (what the user saved last;
        // openTrace takes the file's own saved rule when this is empty).
        std::string rule = asked;
        if (rule.empty() && !first.isEmpty())
            if (auto sidecar = annotationstore::loadSidecar(first, nullptr))
                rule = sidecar->stepRule;
        options.stepRule = rule;
        // One large .gapscope file: its overview and a first window, not every event, unless a rule (asked
        // for, or saved with it) must find the steps from every event.
        if (files.size() == 1 && gapscope::format::checkRegularFile(files[0])) {
            auto reader = gapscope::format::TraceReader::open(files[0]);
            if (reader && rule.empty())
                rule = gapscope::model::savedStepRule(**reader);
            if (reader && (rule.empty() || rule == "file")
                && gapscope::model::fileEvents(**reader) >= largeTraceEvents()) {
                OverviewOptions oo;
                oo.progress = progress;
                auto overview = TraceOverview::openRebuildingIndex(**reader, oo);
                if (!overview)
                    return overview.status();
                if (!(*reader)->hasIndex()) // cut or damaged so that no index could be rebuilt: read whole
                    return openTrace(files, options);
                large->overview = std::make_shared<const TraceOverview>(std::move(*overview));
                large->reader = std::shared_ptr<const gapscope::format::TraceReader>(std::move(*reader));
                large->window = firstWindow(*large->overview, std::min(kFirstWindowEvents, windowEvents()));
                return gapscope::model::readWindow(*large->reader, *large->overview, large->window, options);
            }
        }
        return openTrace(files, options);
    };
    TraceOpener::PrepareFn prepare = [large](LoadedTrace& loaded, const JobTracker::Ticket&) {
        auto d = std::make_shared<Derived>(derive(*loaded.trace));
        d->overview = large->overview;
        d->reader = large->reader;
        d->window = large->window;
        loaded.extra = std::move(d);
    };
    return { std::move(open), std::move(prepare) };
}

TraceOpener::PrepareFn TraceDocument::prepareFunction()
{
    return [](LoadedTrace& loaded, const JobTracker::Ticket&) {
        loaded.extra = std::make_shared<Derived>(derive(*loaded.trace));
    };
}

gapscope::Expected<std::shared_ptr<TraceDocument>> TraceDocument::readWindow(
    const TraceDocument& large, TimeWindow window)
{
    if (!large.reader || !large.overview)
        return gapscope::Status::error("not a large trace: it has no windows");
    QElapsedTimer timer;
    timer.start();
    auto trace = gapscope::model::readWindow(*large.reader, *large.overview, window);
    if (!trace)
        return trace.status();
    auto doc = std::make_shared<TraceDocument>();
    doc->paths = large.paths;
    doc->trace = std::make_shared<const Trace>(std::move(*trace));
    doc->openSeconds = timer.nsecsElapsed() / 1e9;
    timer.restart();
    doc->colors = derive(*doc->trace).colors;
    doc->prepareSeconds = timer.nsecsElapsed() / 1e9;
    doc->overview = large.overview;
    doc->reader = large.reader;
    doc->window = window;
    return doc;
}

TraceDocument TraceDocument::fromLoaded(const LoadedTrace& loaded)
{
    TraceDocument doc;
    doc.paths = loaded.paths;
    doc.trace = loaded.trace;
    doc.openSeconds = loaded.openSeconds;
    doc.prepareSeconds = loaded.prepareSeconds;
    if (auto d = std::static_pointer_cast<Derived>(loaded.extra)) {
        doc.colors = d->colors;
        doc.overview = d->overview;
        doc.reader = d->reader;
        doc.window = d->window;
    }
    return doc;
}

std::shared_ptr<TraceDocument> TraceDocument::open(const QStringList& paths, QString* error, const QString& stepRule)
{
    LoadedTrace loaded;
    loaded.paths = paths;
    QElapsedTimer timer;
    timer.start();
    auto [openFn, prepareFn] = loader(paths, stepRule);
    auto trace = openFn([](double) { return true; });
    if (!trace) {
        if (error)
            *error = QString::fromStdString(trace.error());
        return nullptr;
    }
    loaded.openSeconds = timer.nsecsElapsed() / 1e9;
    loaded.trace = std::make_shared<Trace>(std::move(*trace));
    timer.restart();
    prepareFn(loaded, {});
    loaded.prepareSeconds = timer.nsecsElapsed() / 1e9;
    return std::make_shared<TraceDocument>(fromLoaded(loaded));
}

std::shared_ptr<TraceDocument> TraceDocument::fromTrace(Trace trace, const QString& name)
{
    LoadedTrace loaded;
    loaded.paths = QStringList { name };
    loaded.trace = std::make_shared<Trace>(std::move(trace));
    prepareFunction()(loaded, {});
    return std::make_shared<TraceDocument>(fromLoaded(loaded));
}
