// SPDX-License-Identifier: MIT
#pragma once

// DetailsPane: everything known about the selected event (full kernel name, start, duration,
// grid/block, registers, shared memory, stream, decode step, the CPU API call that launched it and
// the launch latency, the CPU operator that made that call and its stack of enclosing host ranges
// (HostAttribution::enclosing, innermost first), memcpy sizes, collective details), or a summary of a selected time
// range (length, busy time per lane). Links inside the text ("launched by cudaLaunchKernel") emit eventActivated so the
// timeline can jump to that event.
//
// Threading: GUI thread.

#include "model/trace/trace.h"

#include <QTextBrowser>

class EventColors;
class LaneLayout;

class DetailsPane : public QTextBrowser {
    Q_OBJECT
public:
    explicit DetailsPane(QWidget* parent = nullptr);

    void setTrace(const gapscope::model::Trace* trace, const EventColors* colors);
    // Times are shown from here (default: the trace's start; a large file's window: the file's).
    void setTimeOrigin(gapscope::model::TimeNs origin) { m_origin = origin; }
    void showDetails(gapscope::model::EventRef ev);
    void showRange(gapscope::model::TimeNs t0, gapscope::model::TimeNs t1, const LaneLayout& layout);
    void clearDetails();

    // The HTML shown for an event (tests read it).
    QString eventHtml(gapscope::model::EventRef ev) const;
    QString rangeHtml(gapscope::model::TimeNs t0, gapscope::model::TimeNs t1, const LaneLayout& layout) const;

signals:
    void eventActivated(gapscope::model::EventRef ev);

private:
    QString stepText(uint32_t rank, gapscope::model::TimeNs t) const;
    QString kernelRows(gapscope::model::EventRef ev) const;
    QString capturedInRow(uint32_t rank, uint64_t nodeId) const;
    QString launchRows(gapscope::model::EventRef ev) const;
    QString hostRows(gapscope::model::EventRef call) const;
    QString eventLink(gapscope::model::EventRef ev) const;
    // The innermost CPU operator of a host stack (else its innermost range; invalid when empty).
    gapscope::model::EventRef launchingOp(const std::vector<gapscope::model::EventRef>& stack) const;
    const gapscope::model::Trace* m_trace = nullptr;
    gapscope::model::TimeNs m_origin = 0;
    const EventColors* m_colors = nullptr;
};
