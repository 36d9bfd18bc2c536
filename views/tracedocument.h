// SPDX-License-Identifier: MIT
#pragma once

// TraceDocument: an open trace with what the viewer derives from it once (event colours from the
// kernel classifier). Built by prepare() on the loading thread, so nothing O(events) runs on the
// GUI thread after a load (the statistics tables compute theirs in the background once shown). Shared read-only
// afterwards (the GUI, background jobs and exports hold shared_ptrs).
//
// open() is the synchronous path (headless export, tests, benchmarks); the GUI goes through
// TraceOpener with openFunction()/prepareFunction().

#include "model/trace.h"
#include "views/eventcolors.h"
#include "views/traceopener.h"

#include <QStringList>

#include <memory>

struct TraceDocument {
    QStringList paths;
    std::shared_ptr<const gapscope::model::Trace> trace;
    std::shared_ptr<const EventColors> colors;
    double openSeconds = 0;
    double prepareSeconds = 0;

    QString displayName() const;
    // The name shown for the GPU of the trace ("NVIDIA H200"), "" when unknown.
    QString gpuName() const;

    static TraceOpener::OpenFn openFunction(const QStringList& paths);
    static TraceOpener::PrepareFn prepareFunction();
    // Builds a document from a finished load (the prepare step's output).
    static TraceDocument fromLoaded(const LoadedTrace& loaded);
    // Synchronous open + prepare; `error` receives the message on failure.
    static std::shared_ptr<TraceDocument> open(const QStringList& paths, QString* error);
    // A document around an existing trace (tests, synth), prepared synchronously.
    static std::shared_ptr<TraceDocument> fromTrace(gapscope::model::Trace trace, const QString& name);
};
