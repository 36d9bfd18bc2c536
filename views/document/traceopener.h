// SPDX-License-Identifier: MIT
#pragma once

// TraceOpener: opens traces off the GUI thread. load() runs an open function (a file reader, an
// importer, a synthesizer) on a worker thread, then a `prepare` step there too (everything that
// costs O(events): colours, statistics), and delivers the result on the GUI thread. Progress is
// reported at most every 30 ms. Loads are tracked with a JobTracker: starting a new load makes the
// previous one stale (its worker is asked to stop through the progress callback, and its result is
// dropped if it still arrives).
//
// The previous trace, when replaced, should be released off the GUI thread too (releaseLater()):
// freeing hundreds of MB of columns can take longer than a frame.
// Threading: the object lives on the GUI thread; its signals are emitted there.

#include "model/base/status.h"
#include "model/trace/trace.h"
#include "views/common/jobtracker.h"

#include <QObject>
#include <QStringList>

#include <functional>
#include <memory>

// What a load produces, beyond the Trace itself: filled by the prepare step on the worker.
struct LoadedTrace {
    QStringList paths;
    std::shared_ptr<gapscope::model::Trace> trace;
    double openSeconds = 0; // reading / importing
    double prepareSeconds = 0; // the prepare step
    std::shared_ptr<void> extra; // owned by the caller's prepare step (colours, statistics, ...)
};

class TraceOpener : public QObject {
    Q_OBJECT
public:
    // Returns false from `progress` to ask the open function to stop (it should then fail).
    using Progress = std::function<bool(double fraction)>;
    using OpenFn = std::function<gapscope::Expected<gapscope::model::Trace>(const Progress& progress)>;
    using PrepareFn = std::function<void(LoadedTrace& loaded, const JobTracker::Ticket& ticket)>;

    explicit TraceOpener(QObject* parent = nullptr);
    ~TraceOpener() override;

    void load(const QStringList& paths, OpenFn open, PrepareFn prepare = {});
    void cancel();
    bool busy() const { return m_busy; }

    // Destroys `p` on a worker thread.
    static void releaseLater(std::shared_ptr<const void> p);

signals:
    void started(const QStringList& paths);
    void progress(double fraction);
    void loaded(std::shared_ptr<LoadedTrace> result);
    void failed(const QStringList& paths, const QString& message);
    void canceled();

private:
    void finish(std::shared_ptr<LoadedTrace> result, const QString& error);
    JobTracker m_jobs;
    bool m_busy = false;
};
