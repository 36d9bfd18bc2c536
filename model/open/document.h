// SPDX-License-Identifier: MIT
#pragma once

// openDocument: the one way the viewer and gapscope-cli open what they were given, and the one place
// that decides between reading every event and reading a large .gapscope file through its overview.
//
// The decision (openLarge): one regular .gapscope file goes through its overview (model/io/overview.h)
// when asked (ReadMode::Overview) or, by default (Auto), when it holds `largeEvents` events or more
// (model::kLargeTraceEvents); several files, other formats and Full read every event (openTrace). A
// step rule, asked for or saved with the file's annotations (savedStepRule), finds the steps from
// every event: with Auto the file is read whole; with Overview the stored steps are used and `note`
// says so. A file cut before its index whose index the overview's pass cannot rebuild (a damaged chunk)
// is read whole too. openDocument then gives either the whole trace, or the large file and a first
// window of it (firstWindow: from the start, as far as `firstWindowEvents` reach).
//
// Threading: any thread; a LargeFile is shared read-only (its reader and overview serve windows read
// on several threads).

#include "model/io/overview.h"
#include "model/io/tracefile.h"
#include "model/io/tracewindow.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gapscope::model {

// How to read: every event (Full), through the overview (Overview), or by size (Auto).
enum class ReadMode { Auto, Full, Overview };
// "auto", "full" or "overview".
Expected<ReadMode> parseReadMode(std::string_view text);

// A .gapscope file read through its overview: the open reader and the overview; windows on demand.
struct LargeFile {
    std::shared_ptr<const format::TraceReader> reader;
    std::shared_ptr<const TraceOverview> overview;
    Expected<Trace> window(TimeWindow w, const ReadOptions& options = {}) const;
};

struct LargeOptions {
    ReadMode mode = ReadMode::Auto;
    uint64_t largeEvents = kLargeTraceEvents; // Auto: this many events or more go through the overview
    std::string stepRule; // asked for (--step-rule, the Steps menu); empty: the one saved with the file
    OverviewOptions overview; // progress, cancel, keepPassFrame
};

// The large file when `paths` are to be read through its overview, nothing when they are to be read
// whole (openTrace); an error when the overview cannot be opened. `note`, when given, gets a sentence
// for the user when a saved step rule is not applied (Overview asked).
Expected<std::optional<LargeFile>> openLarge(
    const std::vector<std::string>& paths, const LargeOptions& options, std::string* note = nullptr);

struct DocumentOptions {
    LargeOptions large;
    ReadOptions read; // for the whole read and the first window (progress, step rule, memory budget)
    uint64_t firstWindowEvents = 2'000'000;
};

struct Document {
    Trace trace; // every event, or the first window of `large`
    std::optional<LargeFile> large;
    TimeWindow window; // the window `trace` holds when `large` is set
};

// `options.large.stepRule` defaults to `options.read.stepRule`.
Expected<Document> openDocument(const std::vector<std::string>& paths, const DocumentOptions& options);

} // namespace gapscope::model
