// SPDX-License-Identifier: MIT
#include "model/open/document.h"

#include "model/format/regularfile.h"
#include "model/format/tracereader.h"
#include "model/open/traceopen.h"

namespace gapscope::model {

Expected<ReadMode> parseReadMode(std::string_view text)
{
    if (text == "auto")
        return ReadMode::Auto;
    if (text == "full")
        return ReadMode::Full;
    if (text == "overview")
        return ReadMode::Overview;
    return Status::error("--read takes auto, full or overview, not '" + std::string(text) + "'");
}

Expected<Trace> LargeFile::window(TimeWindow w, const ReadOptions& options) const
{
    return readWindow(*reader, *overview, w, options);
}

Expected<std::optional<LargeFile>> openLarge(
    const std::vector<std::string>& paths, const LargeOptions& options, std::string* note)
{
    using None = std::optional<LargeFile>;
    if (options.mode == ReadMode::Full || paths.size() != 1 || !format::checkRegularFile(paths[0]))
        return None();
    auto reader = format::TraceReader::open(paths[0]);
    if (!reader) // not a .gapscope file (or not readable as one): openTrace says what it is
        return None();
    if (options.mode != ReadMode::Overview && fileEvents(**reader) < options.largeEvents)
        return None();
    // A step rule finds the steps from every event; "file" keeps the stored ones, which the overview has.
    const std::string rule = !options.stepRule.empty() ? options.stepRule : savedStepRule(**reader);
    if (!rule.empty() && rule != "file") {
        if (options.mode != ReadMode::Overview)
            return None();
        if (note)
            *note = paths[0] + ": the step rule " + (options.stepRule.empty() ? "saved with its annotations " : "")
                + "(" + rule + ") needs every event: not applied with --read overview (the stored steps are used)";
    }
    auto overview = TraceOverview::openRebuildingIndex(**reader, options.overview);
    if (!overview)
        return overview.status();
    if (!(*reader)->hasIndex()) // cut or damaged so that no index could be rebuilt: read whole
        return None();
    LargeFile large;
    large.reader = std::shared_ptr<const format::TraceReader>(std::move(*reader));
    large.overview = std::make_shared<const TraceOverview>(std::move(*overview));
    return std::optional<LargeFile>(std::move(large));
}

Expected<Document> openDocument(const std::vector<std::string>& paths, const DocumentOptions& options)
{
    LargeOptions lo = options.large;
    if (lo.stepRule.empty())
        lo.stepRule = options.read.stepRule;
    if (!lo.overview.progress && options.read.progress)
        lo.overview.progress = options.read.progress;
    auto large = openLarge(paths, lo);
    if (!large)
        return large.status();
    Document doc;
    if (!*large) {
        auto trace = openTrace(paths, options.read);
        if (!trace)
            return trace.status();
        doc.trace = std::move(*trace);
        return doc;
    }
    doc.window = firstWindow(*(*large)->overview, options.firstWindowEvents);
    auto window = (*large)->window(doc.window, options.read);
    if (!window)
        return window.status();
    doc.trace = std::move(*window);
    doc.large = std::move(*large);
    return doc;
}

} // namespace gapscope::model
