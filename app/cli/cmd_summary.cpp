// SPDX-License-Identifier: MIT
// gapscope-cli summary: per-step and per-kernel-name tables of a trace.
#include "args.h"
#include "command.h"
#include "largefile.h"

#include "model/analysis/kernelranges.h"
#include "model/base/json.h"
#include "model/base/patternmatcher.h"
#include "model/io/tracewindow.h"
#include "model/open/traceopen.h"
#include "model/trace/kernelname.h"
#include "model/trace/tracesummary.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <functional>
#include <map>
#include <optional>

namespace gapscope::cli {
namespace {

using model::formatDuration;

std::string truncateName(std::string_view s, size_t width)
{
    if (s.size() <= width)
        return std::string(s);
    size_t cut = width - 3;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80)
        --cut; // never inside a UTF-8 sequence ("…")
    return std::string(s.substr(0, cut)) + "...";
}

// Events read at once on the overview path: whole steps, about this many (~200 MB in memory; the medians
// keep 4 bytes per kernel besides). Half as many made the 36M-kernel file's summary 8 % slower.
constexpr uint64_t kBatchEvents = 4'000'000;

using NameOf = std::function<std::string_view(model::StringId)>;

json::Value summaryJson(const NameOf& str, const std::vector<model::StepRow>& steps,
    const std::vector<model::KernelRow>& kernels, size_t top)
{
    json::Value o = json::Value::object();
    json::Value sa = json::Value::array();
    for (const auto& s : steps) {
        json::Value x = json::Value::object();
        x.set("rank", s.rank);
        x.set("index", s.index);
        x.set("start_ns", (long long)s.start);
        x.set("window_ns", (long long)s.window);
        x.set("gpu_span_ns", (long long)s.gpuSpan);
        x.set("kernels", (unsigned long long)s.kernels);
        x.set("busy_ns", (long long)s.busy);
        x.set("kind", model::toString(s.kind));
        if (!s.label.empty())
            x.set("label", s.label);
        if (s.batch)
            x.set("batch", s.batch);
        if (s.tokens)
            x.set("tokens", s.tokens);
        sa.push(std::move(x));
    }
    o.set("steps", std::move(sa));
    json::Value ka = json::Value::array();
    for (size_t i = 0; i < kernels.size() && i < top; ++i) {
        const auto& k = kernels[i];
        json::Value x = json::Value::object();
        x.set("name", str(k.name));
        x.set("count", (unsigned long long)k.count);
        x.set("total_ns", (long long)k.total);
        x.set("mean_ns", (long long)(k.total / int64_t(std::max<uint64_t>(1, k.count))));
        x.set("median_ns", (long long)k.median);
        x.set("min_ns", (long long)k.min);
        x.set("max_ns", (long long)k.max);
        x.set("own_total_ns", (long long)k.ownTotal);
        x.set("own_median_ns", (long long)k.ownMedian);
        ka.push(std::move(x));
    }
    o.set("kernels", std::move(ka));
    return o;
}

void printSteps(const std::vector<model::StepRow>& steps, bool perRank)
{
    std::printf("%-6s %-6s %14s %14s %9s %8s\n", "step", "rank", "window", "gpu busy", "busy %", "kernels");
    if (perRank) {
        for (const auto& s : steps)
            std::printf("%-6u %-6u %14s %14s %8.1f%% %8llu\n", s.index, s.rank, formatDuration(s.window).c_str(),
                formatDuration(s.busy).c_str(), s.window ? 100.0 * double(s.busy) / double(s.window) : 0.0,
                (unsigned long long)s.kernels);
        return;
    }
    // One row per step: the slowest rank's window (the step ends when every rank is done).
    std::map<uint32_t, model::StepRow> worst;
    for (const auto& s : steps) {
        auto [it, inserted] = worst.emplace(s.index, s);
        if (!inserted && s.window > it->second.window)
            it->second = s;
    }
    for (const auto& [index, s] : worst)
        std::printf("%-6u %-6s %14s %14s %8.1f%% %8llu\n", index, ("max:" + std::to_string(s.rank)).c_str(),
            formatDuration(s.window).c_str(), formatDuration(s.busy).c_str(),
            s.window ? 100.0 * double(s.busy) / double(s.window) : 0.0, (unsigned long long)s.kernels);
}

void printKernels(const NameOf& str, const std::vector<model::KernelRow>& kernels, size_t top, size_t width)
{
    model::TimeNs all = 0;
    for (const auto& k : kernels)
        all += k.total;
    std::printf("\n%10s %7s %12s %12s %12s %12s %12s  %s\n", "count", "time %", "total", "own total", "median",
        "own median", "max", "kernel");
    for (size_t i = 0; i < kernels.size() && i < top; ++i) {
        const auto& k = kernels[i];
        std::printf("%10llu %6.2f%% %12s %12s %12s %12s %12s  %s\n", (unsigned long long)k.count,
            all ? 100.0 * double(k.total) / double(all) : 0.0, formatDuration(k.total).c_str(),
            formatDuration(k.ownTotal).c_str(), formatDuration(k.median).c_str(), formatDuration(k.ownMedian).c_str(),
            formatDuration(k.max).c_str(), truncateName(model::shortKernelName(str(k.name)), width).c_str());
    }
    if (kernels.size() > top)
        std::printf("(%zu more kernel names; --top N shows more)\n", kernels.size() - top);
}

// The trace's graph-node table by the call that built each node and by node type ("" where not known).
struct NodeTally {
    size_t entries = 0;
    std::map<std::string, size_t> byCall, byType;
};

NodeTally tallyNodes(const model::Trace& trace)
{
    NodeTally t;
    for (const model::GraphNodeInfo& n : trace.graphNodes()) {
        ++t.entries;
        ++t.byCall[n.api ? std::string(trace.str(n.api)) : std::string()];
        ++t.byType[model::graphNodeTypeName(n.nodeType)];
    }
    return t;
}

std::string tallyText(const std::map<std::string, size_t>& m)
{
    std::string out;
    for (const auto& [name, n] : m)
        out += (out.empty() ? "" : ", ") + (name.empty() ? std::string("not known") : name) + " " + std::to_string(n);
    return out;
}

json::Value rangeJson(const model::Trace& trace, const model::KernelRanges& ranges, const model::RangeTable& table)
{
    json::Value o = json::Value::object();
    o.set("steps", (unsigned long long)table.steps);
    o.set("kernels", (unsigned long long)table.kernels);
    json::Value src = json::Value::object();
    for (auto s : { model::RangeSource::Launch, model::RangeSource::Capture, model::RangeSource::Inferred,
             model::RangeSource::None })
        src.set(model::toString(s), (unsigned long long)ranges.kernels(s));
    o.set("kernels_by_source", std::move(src));
    o.set("graph_kernels", (unsigned long long)ranges.graphKernels());
    o.set("graph_kernels_with_build_context", (unsigned long long)ranges.graphKernelsWithContext());
    json::Value rows = json::Value::array();
    for (const auto& r : table.rows) {
        json::Value x = json::Value::object();
        x.set("path", r.path);
        x.set("source", model::toString(r.source));
        x.set("count", (unsigned long long)r.count);
        x.set("per_step", table.steps ? double(r.count) / double(table.steps) : double(r.count));
        x.set("median_per_step", r.medianPerStep);
        x.set("total_ns", (long long)r.total);
        x.set("own_total_ns", (long long)r.ownTotal);
        rows.push(std::move(x));
    }
    o.set("rows", std::move(rows));
    json::Value blocks = json::Value::array();
    for (const auto& b : ranges.layerBlocks()) {
        json::Value x = json::Value::object();
        x.set("rank", b.rank);
        x.set("graph_id", (unsigned long long)b.graphId);
        x.set("nodes", (unsigned long long)b.nodes);
        x.set("period", (unsigned long long)b.period);
        x.set("layers", (unsigned long long)b.layers);
        x.set("first", (unsigned long long)b.first);
        blocks.push(std::move(x));
    }
    o.set("inferred_layer_blocks", std::move(blocks));
    const NodeTally nodes = tallyNodes(trace);
    json::Value g = json::Value::object();
    g.set("entries", (unsigned long long)nodes.entries);
    for (const auto& [key, m] : { std::pair { "by_call", &nodes.byCall }, std::pair { "by_type", &nodes.byType } }) {
        json::Value x = json::Value::object();
        for (const auto& [name, n] : *m)
            x.set(name, (unsigned long long)n);
        g.set(key, std::move(x));
    }
    o.set("graph_nodes", std::move(g));
    return o;
}

void printRanges(const model::Trace& trace, const model::KernelRanges& ranges, const model::RangeTable& table,
    size_t top, size_t width)
{
    std::printf("\nkernels by range (%s; %llu kernels%s): capture-time %llu, at launch %llu, inferred %llu, "
                "none %llu\n",
        "own time", (unsigned long long)table.kernels,
        table.steps ? (" in " + std::to_string(table.steps) + " steps").c_str() : "",
        (unsigned long long)ranges.kernels(model::RangeSource::Capture),
        (unsigned long long)ranges.kernels(model::RangeSource::Launch),
        (unsigned long long)ranges.kernels(model::RangeSource::Inferred),
        (unsigned long long)ranges.kernels(model::RangeSource::None));
    model::TimeNs all = 0;
    for (const auto& r : table.rows)
        all += r.ownTotal;
    std::printf("%10s %10s %7s %12s  %-9s %s\n", "count", "per step", "share", "own ms", "source", "range");
    for (size_t i = 0; i < table.rows.size() && i < top; ++i) {
        const auto& r = table.rows[i];
        std::string path = r.path.size() > width ? r.path.substr(0, width - 3) + "..." : r.path;
        std::printf("%10llu %10.2f %6.1f%% %12.3f  %-9s %s\n", (unsigned long long)r.count,
            table.steps ? double(r.count) / double(table.steps) : double(r.count),
            all ? 100.0 * double(r.ownTotal) / double(all) : 0.0, double(r.ownTotal) / 1e6, model::toString(r.source),
            path.c_str());
    }
    if (table.rows.size() > top)
        std::printf("(%zu more ranges; --top N shows more)\n", table.rows.size() - top);
    if (const NodeTally nodes = tallyNodes(trace); nodes.entries)
        std::printf("graph nodes recorded: %zu; built in: %s; types: %s\n", nodes.entries,
            tallyText(nodes.byCall).c_str(), tallyText(nodes.byType).c_str());
}

int runSummary(const std::vector<std::string>& args)
{
    ArgParser p("summary", "FILE...",
        "Per-step table (window [start_i, start_i+1), GPU busy time, kernels; the slowest rank per step unless\n"
        "--per-rank) and per-kernel-name table (count, share of kernel time, total, own total, median, own\n"
        "median, max). Kernel names are shown short (no return type, `<…>` for template arguments, `(…)` for\n"
        "parameters); --json gives the full names.\n"
        "GPU busy time is, per GPU stream, the union of its events inside the window (a kernel launched early\n"
        "by programmatic dependent launch counts only past the previous kernel's end), summed over the\n"
        "streams; concurrent streams still add up. A kernel's own time runs from the latest end of the earlier\n"
        "work on its stream (or its start, if later) to its end; total and median are raw durations.");
    bool json = false, perRank = false;
    int64_t top = 20, width = 100;
    std::string sort = "total";
    p.flag("--json", "machine-readable output (every rank's steps)", json);
    p.flag("--per-rank", "one step row per rank", perRank);
    p.option("--top", "N", "kernel names to list (default 20)", top);
    p.option("--name-width", "N", "truncate kernel names to N characters in text output (default 100)", width);
    p.option("--sort", "total|own", "order kernel names by total or own total time (default total)", sort);
    bool byRange = false;
    std::string skipRange;
    p.flag("--by-range",
        "also own time per annotated range: NVTX/user ranges open at a kernel's launch, for CUDA-graph\n"
        "kernels the ranges open where their graph node was built, else an inferred layer (reads the whole file)",
        byRange);
    bool inferLayers = false;
    p.flag("--infer-layers",
        "with --by-range: infer the layer of every graph kernel, ignoring the ranges stored with\n"
        "its graph node (to check the inference against them)",
        inferLayers);
    p.option("--skip-range", "REGEX", "range names left out of range paths (default: the NVTX step rule's pattern)",
        skipRange);
    std::string read = "auto";
    addReadOption(p, read, "from the file's overview and its steps read a few at a time, in bounded memory");
    std::string stepRule;
    addStepRuleOption(p, stepRule);
    p.setPositionals(1, SIZE_MAX);
    if (int rc = p.parse(args); rc >= 0)
        return rc;
    if (!readModeValid("summary", read) || !stepRuleValid("summary", stepRule, &read))
        return kExitUsage;
    if (top < 0 || width < 8)
        return p.usageError("--top must be >= 0 and --name-width >= 8");
    if (sort != "total" && sort != "own")
        return p.usageError("--sort must be total or own");
    const model::KernelOrder order = sort == "own" ? model::KernelOrder::Own : model::KernelOrder::Total;
    std::string error;
    if (byRange)
        read = "full";
    std::optional<LargeFile> large = openLarge(p.positionals(), read, error);
    if (!error.empty()) {
        std::cerr << "gapscope-cli summary: " << error << "\n";
        return kExitFailure;
    }
    std::vector<model::StepRow> steps;
    std::vector<model::KernelRow> kernels;
    std::optional<model::Trace> trace;
    NameOf str;
    if (large && large->overview->stepCount() > 0) { // whole steps at a time (a file without steps: read whole)
        auto tables = model::summaryTables(*large->reader, *large->overview, order, kBatchEvents);
        if (!tables) {
            std::cerr << "gapscope-cli summary: " << tables.error() << "\n";
            return kExitFailure;
        }
        steps = std::move(tables->steps);
        kernels = std::move(tables->kernels);
        str = [&large](model::StringId id) { return large->overview->str(id); };
        for (const auto& w : large->overview->warnings())
            std::cerr << "gapscope-cli summary: warning: " << w << "\n";
    } else {
        model::ReadOptions ro;
        ro.stepRule = stepRule;
        auto opened = model::openTrace(p.positionals(), ro);
        if (!opened) {
            std::cerr << "gapscope-cli summary: " << opened.error() << "\n";
            return kExitFailure;
        }
        trace = std::move(*opened);
        steps = model::stepTable(*trace);
        kernels = model::kernelTable(*trace, order);
        str = [&trace](model::StringId id) { return trace->str(id); };
    }
    std::optional<model::KernelRanges> ranges;
    model::RangeTable rangeRows;
    if (byRange) {
        if (!skipRange.empty())
            if (auto m = model::PatternMatcher::compile(skipRange); !m)
                return p.usageError("--skip-range: " + m.error());
        model::KernelRangeOptions ko;
        ko.skip = skipRange;
        ko.ignoreNodeTable = inferLayers;
        ranges = model::KernelRanges::of(*trace, ko);
        rangeRows = model::rangeTable(*trace, *ranges);
    }
    if (json) {
        json::Value o = summaryJson(str, steps, kernels, size_t(top));
        if (ranges)
            o.set("ranges", rangeJson(*trace, *ranges, rangeRows));
        std::cout << json::write(o, 2) << "\n";
        return kExitOk;
    }
    if (steps.empty())
        std::printf("no steps (none recorded and none detected)\n");
    else
        printSteps(steps, perRank);
    printKernels(str, kernels, size_t(top), size_t(width));
    if (ranges)
        printRanges(*trace, *ranges, rangeRows, size_t(top), size_t(width));
    return kExitOk;
}

} // namespace

GAPSCOPE_CLI_COMMAND(summary, "summary", "per-step and per-kernel-name tables of a trace", runSummary);

} // namespace gapscope::cli
