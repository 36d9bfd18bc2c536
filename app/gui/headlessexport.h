// SPDX-License-Identifier: MIT
#pragma once

// HeadlessExport: `gapscope FILE --export-png OUT.png [--range A:B] [--step N] [--size WxH]`
// (and --export-svg, --export-html: the report of `gapscope-cli report`): opens the trace, computes the budget (the
// file's settings, or the default, or --model/--hw/--precision/--tp) and the analysis, and writes the same picture the
// window's "Export image" writes, without a display (main() sets QT_QPA_PLATFORM=offscreen first). Everything runs
// synchronously on the calling (GUI) thread.
//
// --range A:B  the timeline window, times from the trace start: numbers with a unit (ns, us, ms,
//              s; no unit = ms), e.g. --range 120ms:135.5ms; the waterfall shows that range.
// --step N     the timeline window and the waterfall of decode step N.
// --rank R     the waterfall of rank R (default: the critical rank).
// --cpu-lanes W  which ranks' "CPU threads" groups are open: first (default: the first rank that has
//              CPU thread lanes), all, none, or a comma-separated list of ranks.

#include <QSize>
#include <QString>
#include <QStringList>

#include <optional>
#include <set>
#include <vector>

struct HeadlessOptions {
    QStringList files;
    QString png;
    QString svg;
    QString html;
    QString range;
    int step = -1;
    int rank = -1;
    QSize size { 1920, 1080 };
    QString model, hardware, precision;
    int tp = 0;
    QString cpuLanes = QStringLiteral("first");
};

namespace headlessexport {

// Parses "WxH"; nullopt when malformed.
std::optional<QSize> parseSize(const QString& text);
// Parses one time ("12.5ms", "800us", "3" = 3 ms) into ns; nullopt when malformed.
std::optional<qint64> parseTime(const QString& text);
// The ranks whose "CPU threads" group --cpu-lanes opens, of the ranks that have CPU thread lanes
// (sorted); nullopt when malformed.
std::optional<std::set<uint32_t>> parseCpuLanes(const QString& text, const std::vector<uint32_t>& withThreads);
// Runs the export; returns the process exit code (0 ok, 2 usage, 3 failure), messages on stderr.
int run(const HeadlessOptions& options);

} // namespace headlessexport
