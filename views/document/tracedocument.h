// SPDX-License-Identifier: MIT
#pragma once

// TraceDocument: an open trace with what the viewer derives from it once (event colours from the
// kernel classifier). Built by prepare() on the loading thread, so nothing O(events) runs on the
// GUI thread after a load (the statistics tables compute theirs in the background once shown). Shared read-only
// afterwards (the GUI, background jobs and exports hold shared_ptrs).
//
// The trace comes from model::openDocument (model/open/document.h: whole, or a large file through its
// overview; the same decision gapscope-cli makes), its classifier from model::traceClassifier. A large
// .gapscope file (model::kLargeTraceEvents or more) is not read whole: the document holds its overview
// (model/io/overview.h: what the timeline draws zoomed out, the steps, the totals), the open file, and
// `trace` is a window of it (model/io/tracewindow.h: the file's lanes and string ids, the
// events of the window, the steps inside it) that the workspace replaces as the user moves
// (readWindow()). Everything that reads `trace` (tables, analysis, details) covers that window.
//
// open() is the synchronous path (headless export, tests, benchmarks); the GUI goes through
// TraceOpener with loader(), whose open and prepare functions share what a large file needs.

#include "model/open/document.h"
#include "model/trace/trace.h"
#include "views/common/eventcolors.h"
#include "views/document/traceopener.h"

#include <QStringList>

#include <memory>
#include <utility>

struct TraceDocument {
    QStringList paths;
    std::shared_ptr<const gapscope::model::Trace> trace;
    std::shared_ptr<const EventColors> colors;
    double openSeconds = 0;
    double prepareSeconds = 0;
    // Large files: the overview, the file windows are read from (model/open/document.h), and the
    // window `trace` holds.
    std::shared_ptr<const gapscope::model::TraceOverview> overview;
    std::shared_ptr<const gapscope::model::LargeFile> file;
    gapscope::model::TimeWindow window;
    bool large() const { return overview != nullptr; }
    // Said once when the trace opens: a stored classifier that did not load (the built-in one is used).
    QString classifierError;

    QString displayName() const;
    // The name shown for the GPU of the trace ("NVIDIA H200"), "" when unknown.
    QString gpuName() const;

    // How much memory a large file's window may take (preferences, the viewer's --cache-mb; default
    // 1 GiB): its events with what the viewer derives from them (analysis, tables). A view that holds
    // more events is drawn from the overview, not read.
    static uint64_t cacheBytes();
    static void setCacheBytes(uint64_t bytes);
    static uint64_t windowEvents(); // cacheBytes() / what a window's event costs the viewer (192 B)
    // From how many events a .gapscope file opens as a large one (model::kLargeTraceEvents; tests
    // lower it to try the large path on small files).
    static uint64_t largeTraceEvents();
    static void setLargeTraceEvents(uint64_t events);

    // stepRule: how the steps are found (model/steps/steprule.h); empty: the rule saved with the trace's
    // annotations (its sidecar's, else the file's own section), else a capture's stored steps kept and
    // the others' found by "auto". A large file is read through its overview (its stored steps) unless a
    // rule other than "file" is asked for or saved.
    static std::pair<TraceOpener::OpenFn, TraceOpener::PrepareFn> loader(
        const QStringList& paths, const QString& stepRule = {});
    static TraceOpener::PrepareFn prepareFunction();
    // Builds a document from a finished load (the prepare step's output).
    static TraceDocument fromLoaded(const LoadedTrace& loaded);
    // Synchronous open + prepare; `error` receives the message on failure.
    static std::shared_ptr<TraceDocument> open(const QStringList& paths, QString* error, const QString& stepRule = {});
    // A document around an existing trace (tests, synth), prepared synchronously.
    static std::shared_ptr<TraceDocument> fromTrace(gapscope::model::Trace trace, const QString& name);
    // Another window of a large document (on any thread): the same overview, reader and paths.
    static gapscope::Expected<std::shared_ptr<TraceDocument>> readWindow(
        const TraceDocument& large, gapscope::model::TimeWindow window);
    // Writes a document's trace as a .gapscope file, without the lanes the loader derives (the replay
    // ranges: the file's reader derives them again).
    static gapscope::Status save(const gapscope::model::Trace& trace, const QString& path);
};
