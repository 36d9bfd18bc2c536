// SPDX-License-Identifier: MIT
#include "views/document/tracedocument.h"

#include "model/analysis/kernelranges.h"
#include "model/io/tracefile.h"
#include "model/open/document.h"
#include "model/trace/traceclassifier.h"
#include "views/annotations/annotationstore.h"

#include <QElapsedTimer>
#include <QFileInfo>

#include <atomic>

using namespace gapscope::model;

namespace {

// What prepare() leaves in LoadedTrace::extra.
struct Derived {
    std::shared_ptr<const EventColors> colors;
    QString classifierError;
    std::shared_ptr<const TraceOverview> overview;
    std::shared_ptr<const LargeFile> file;
    TimeWindow window;
};

// What the open function of a large file hands to the prepare function (the same load).
struct LargeOpen {
    std::shared_ptr<const LargeFile> file;
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

Derived derive(const Trace& trace)
{
    std::string error;
    const KernelClassifier classifier = traceClassifierOrDefault(trace, &error);
    auto colors = std::make_shared<EventColors>();
    colors->build(trace, [&classifier](std::string_view name) {
        const int c = classifier.classify(name);
        return c >= 0 ? classifier.classes()[size_t(c)].name : std::string();
    });
    Derived d;
    d.colors = std::move(colors);
    d.classifierError = QString::fromStdString(error);
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
        // The rule asked for, else the one saved in the annotations' sidecar (what the user saved last;
        // openTrace takes the file's own saved rule when this is empty).
        std::string rule = asked;
        if (rule.empty() && !first.isEmpty())
            if (auto sidecar = annotationstore::loadSidecar(first, nullptr))
                rule = sidecar->stepRule;
        DocumentOptions options;
        options.read.progress = progress;
        options.read.stepRule = rule;
        options.large.largeEvents = largeTraceEvents();
        options.firstWindowEvents = std::min(kFirstWindowEvents, windowEvents());
        auto doc = openDocument(files, options);
        if (!doc)
            return doc.status();
        if (doc->large) {
            large->file = std::make_shared<const LargeFile>(std::move(*doc->large));
            large->window = doc->window;
        } else { // the timeline's grouping of each replay's kernels by capture-time range, before anyone reads it
            addReplayRangeLanes(doc->trace);
        }
        return std::move(doc->trace);
    };
    TraceOpener::PrepareFn prepare = [large](LoadedTrace& loaded, const JobTracker::Ticket&) {
        auto d = std::make_shared<Derived>(derive(*loaded.trace));
        if (large->file) {
            d->overview = large->file->overview;
            d->file = large->file;
            d->window = large->window;
        }
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
    if (!large.file || !large.overview)
        return gapscope::Status::error("not a large trace: it has no windows");
    QElapsedTimer timer;
    timer.start();
    auto trace = large.file->window(window);
    if (!trace)
        return trace.status();
    auto doc = std::make_shared<TraceDocument>();
    doc->paths = large.paths;
    doc->trace = std::make_shared<const Trace>(std::move(*trace));
    doc->openSeconds = double(timer.nsecsElapsed()) / 1e9;
    timer.restart();
    doc->colors = derive(*doc->trace).colors;
    doc->prepareSeconds = double(timer.nsecsElapsed()) / 1e9;
    doc->overview = large.overview;
    doc->file = large.file;
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
        doc.classifierError = d->classifierError;
        doc.overview = d->overview;
        doc.file = d->file;
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
    loaded.openSeconds = double(timer.nsecsElapsed()) / 1e9;
    loaded.trace = std::make_shared<Trace>(std::move(*trace));
    timer.restart();
    prepareFn(loaded, {});
    loaded.prepareSeconds = double(timer.nsecsElapsed()) / 1e9;
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

gapscope::Status TraceDocument::save(const Trace& trace, const QString& path)
{
    WriteOptions o;
    o.skipLane = [](const LaneInfo& info) { return isReplayRangeLane(info); };
    return writeTraceFile(trace, path.toStdString(), o);
}
