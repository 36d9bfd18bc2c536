// SPDX-License-Identifier: MIT
#pragma once

// CompareRunner: the work behind File > Compare with…, next to the view it fills (CompareView).
// compareWith() opens trace B and compares the shown trace A with it (Comparison::make, with A's
// classifier and budget, as `gapscope-cli diff`) on jobPool(); the result comes back to the GUI
// thread through a queued call. Jobs go through a JobTracker: a newer compareWith() makes the one
// still running stale, and a stale result (or failure) is dropped, never shown. The first comparison
// creates the "Compare" dock (objectName "compare", bottom area) on the window; each later one
// replaces its content and raises it. A failure shows a warning with the reader's message.
// exportImageDialog() writes the shown comparison as PNG or SVG (File > Export > Comparison image…),
// suggesting the "exportDir" setting that the window's image export uses too.
//
// Threading: GUI thread; opening B and comparing run on jobPool().

#include "views/common/jobtracker.h"
#include "views/document/tracedocument.h"

#include <QObject>
#include <QStringList>

#include <memory>

namespace gapscope::model {
class GapAnalyzer;
}
class CompareView;
class QDockWidget;
class QMainWindow;

class CompareRunner : public QObject {
    Q_OBJECT
public:
    // The dock goes on `window`, which also parents the dialogs.
    explicit CompareRunner(QMainWindow* window);
    ~CompareRunner() override;

    // Compares `a` with the trace of `paths` (B). `analyzerOfA`: A's analysis, whose classifier and
    // budget both sides get (null: the built-in classifier, no budget).
    void compareWith(std::shared_ptr<const TraceDocument> a, const QStringList& paths,
        const gapscope::model::GapAnalyzer* analyzerOfA);
    // Asks where to write the shown comparison and writes it; nothing when none is shown.
    void exportImageDialog();

    CompareView* view() const { return m_view; } // null before the first comparison
    QDockWidget* dock() const { return m_dock; }

signals:
    void statusText(const QString& text); // for the window's status line: comparing, compared, failed
    void message(const QString& text); // a passing message (the export's result)
    void shown(); // a new comparison is in the dock

private:
    struct Result;
    void finish(const QStringList& paths, const Result& r);

    QMainWindow* m_window;
    JobTracker m_jobs;
    CompareView* m_view = nullptr;
    QDockWidget* m_dock = nullptr;
};
