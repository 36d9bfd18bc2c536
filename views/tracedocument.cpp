// SPDX-License-Identifier: MIT
#include "views/tracedocument.h"

#include "model/kernelclassifier.h"
#include "model/open/traceopen.h"

#include <QElapsedTimer>
#include <QFileInfo>

using namespace gapscope::model;

namespace {

// What prepare() leaves in LoadedTrace::extra.
struct Derived {
    std::shared_ptr<const EventColors> colors;
};

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

TraceOpener::OpenFn TraceDocument::openFunction(const QStringList& paths)
{
    std::vector<std::string> files;
    for (const QString& p : paths)
        files.push_back(p.toStdString());
    return [files](const TraceOpener::Progress& progress) {
        ReadOptions options;
        options.progress = progress;
        return openTrace(files, options);
    };
}

TraceOpener::PrepareFn TraceDocument::prepareFunction()
{
    return [](LoadedTrace& loaded, const JobTracker::Ticket&) {
        loaded.extra = std::make_shared<Derived>(derive(*loaded.trace));
    };
}

TraceDocument TraceDocument::fromLoaded(const LoadedTrace& loaded)
{
    TraceDocument doc;
    doc.paths = loaded.paths;
    doc.trace = loaded.trace;
    doc.openSeconds = loaded.openSeconds;
    doc.prepareSeconds = loaded.prepareSeconds;
    if (auto d = std::static_pointer_cast<Derived>(loaded.extra))
        doc.colors = d->colors;
    return doc;
}

std::shared_ptr<TraceDocument> TraceDocument::open(const QStringList& paths, QString* error)
{
    LoadedTrace loaded;
    loaded.paths = paths;
    QElapsedTimer timer;
    timer.start();
    auto trace = openFunction(paths)([](double) { return true; });
    if (!trace) {
        if (error)
            *error = QString::fromStdString(trace.error());
        return nullptr;
    }
    loaded.openSeconds = timer.nsecsElapsed() / 1e9;
    loaded.trace = std::make_shared<Trace>(std::move(*trace));
    timer.restart();
    prepareFunction()(loaded, {});
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
