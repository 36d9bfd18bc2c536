// SPDX-License-Identifier: MIT
// gapscope-cli info: what a trace holds (header, GPUs, ranks, steps, counts, losses, warnings).
#include "args.h"
#include "command.h"

#include "largefile.h"
#include "model/base/json.h"
#include "model/base/memoryuse.h"
#include "model/format/tracereader.h"
#include "model/io/overview.h"
#include "model/io/tracefile.h"
#include "model/open/traceopen.h"
#include "model/trace/tracesummary.h"

#include <cstdio>
#include <optional>
#include <iostream>
#include <sys/stat.h>

namespace gapscope::cli {
namespace {

using model::EventKind;
using model::formatDuration;

const EventKind kKinds[] = { EventKind::Kernel, EventKind::Memcpy, EventKind::Memset, EventKind::Api, EventKind::Sync,
    EventKind::Nvtx, EventKind::Collective, EventKind::Host };

// What info prints, from a full read or from the file's overview.
struct InfoData {
    model::TraceHeader header;
    model::TraceStats stats;
    model::TimeNs start = 0, end = 0;
    uint64_t events = 0;
    uint32_t steps = 0;
    std::vector<std::string> warnings;
    std::string read = "full"; // how: "full" (every event decoded) or "overview"
    model::StepReport stepReport;
};

InfoData fromTrace(const model::Trace& t)
{
    return InfoData { t.header(), model::traceStats(t), t.startTime(), t.endTime(), t.eventCount(), t.stepCount(),
        t.warnings(), "full", t.stepReport() };
}

InfoData fromOverview(const model::TraceOverview& o)
{
    model::StepReport stored; // an overview reads the steps stored in the file as they are
    stored.rule = "file";
    stored.kept = true;
    stored.source = o.stats().stepSource;
    return InfoData { o.header(), o.stats(), o.startTime(), o.endTime(), o.eventCount(), o.stepCount(), o.warnings(),
        "overview", stored };
}

// Where most steps came from (a graph-replayed loop's prefill steps come from the forward rule).
model::StepSource stepSource(const InfoData& t)
{
    return t.stepReport.source != model::StepSource::Unknown ? t.stepReport.source : t.stats.stepSource;
}

// The size of a file on disk, -1 where it cannot be read.
long long fileBytes(const std::string& path)
{
    struct stat sb { };
    return ::stat(path.c_str(), &sb) == 0 ? (long long)sb.st_size : -1;
}

// `file` and `bytes` name the first file (as before several files could be opened as one trace);
// `files` lists every file opened.
json::Value infoJson(const std::vector<std::string>& paths, const InfoData& t)
{
    const model::TraceHeader& h = t.header;
    const model::TraceStats& st = t.stats;
    json::Value o = json::Value::object();
    o.set("file", paths.front());
    if (const long long b = fileBytes(paths.front()); b >= 0)
        o.set("bytes", b);
    json::Value files = json::Value::array();
    for (const auto& path : paths) {
        json::Value f = json::Value::object();
        f.set("file", path);
        if (const long long b = fileBytes(path); b >= 0)
            f.set("bytes", b);
        files.push(std::move(f));
    }
    o.set("files", std::move(files));
    o.set("source", h.source);
    o.set("tool_version", h.toolVersion);
    o.set("clock_domain", h.clockDomain);
    o.set("start_ns", (long long)t.start);
    o.set("end_ns", (long long)t.end);
    o.set("duration_ns", (long long)(t.end - t.start));
    o.set("event_count", (unsigned long long)t.events);
    json::Value kinds = json::Value::object();
    for (EventKind k : kKinds) // host events only when there are some: older outputs keep their shape
        if (k != EventKind::Host || st.byKind[size_t(k)])
            kinds.set(model::toString(k), (unsigned long long)st.byKind[size_t(k)]);
    if (st.byKind[size_t(EventKind::Host)]) {
        json::Value host = json::Value::object();
        for (size_t hk = 0; hk < model::kHostKinds; ++hk) // sampled stacks only when there are some
            if (model::HostKind(hk) != model::HostKind::Sampled || st.byHostKind[hk])
                host.set(model::toString(model::HostKind(hk)), (unsigned long long)st.byHostKind[hk]);
        host.set("threads", (unsigned long long)st.cpuThreads);
        o.set("host_events", std::move(host));
    }
    o.set("events", std::move(kinds));
    o.set("kernel_count", (unsigned long long)st.kernels);
    o.set("kernel_time_ns", (long long)st.kernelTime);
    o.set("step_count", t.steps);
    o.set("step_source", model::toString(stepSource(t)));
    o.set("step_rule", t.stepReport.rule);
    json::Value stepKinds = json::Value::object();
    for (size_t k = 0; k < model::kStepKinds; ++k)
        stepKinds.set(model::toString(model::StepKind(k)), st.stepKinds[k]);
    o.set("step_kinds", std::move(stepKinds));
    if (!t.stepReport.tried.empty()) {
        json::Value tried = json::Value::array();
        for (const auto& line : t.stepReport.tried)
            tried.push(line);
        o.set("step_rules_tried", std::move(tried));
    }
    json::Value gpus = json::Value::array();
    for (const auto& g : h.gpus) {
        json::Value x = json::Value::object();
        x.set("name", g.name);
        x.set("uuid", g.uuid);
        x.set("host", g.host);
        x.set("device", g.deviceIndex);
        x.set("sm_count", g.smCount);
        x.set("memory_bytes", (unsigned long long)g.memoryBytes);
        x.set("sm_clock_mhz", g.smClockMhz);
        x.set("memory_clock_mhz", g.memoryClockMhz);
        gpus.push(std::move(x));
    }
    o.set("gpus", std::move(gpus));
    json::Value ranks = json::Value::array();
    for (const auto& r : st.ranks) {
        json::Value x = json::Value::object();
        x.set("rank", r.rank);
        for (const auto& ri : h.ranks)
            if (ri.rank == r.rank) {
                x.set("pid", ri.pid);
                x.set("host", ri.host);
                x.set("gpu_uuid", ri.gpuUuid);
            }
        x.set("kernel_count", (unsigned long long)r.kernels);
        x.set("kernel_time_ns", (long long)r.kernelTime);
        x.set("step_count", r.steps);
        x.set("event_count", (unsigned long long)r.events);
        x.set("lanes", r.lanes);
        if (const model::OverheadEvidence* e = model::captureOverhead(h, r.rank))
            x.set("capture_overhead", model::captureOverheadJson(*e));
        ranks.push(std::move(x));
    }
    o.set("ranks", std::move(ranks));
    json::Value counters = json::Value::array();
    for (const auto& c : h.counters) {
        json::Value x = json::Value::object();
        x.set("name", c.name);
        x.set("rank", c.rank);
        x.set("value", (unsigned long long)c.value);
        x.set("severity", c.severity);
        x.set("detail", c.detail);
        counters.push(std::move(x));
    }
    o.set("counters", std::move(counters));
    json::Value warnings = json::Value::array();
    for (const auto& w : t.warnings)
        warnings.push(w);
    o.set("warnings", std::move(warnings));
    // How the figures were read, and what reading them held in memory.
    o.set("read", t.read);
    o.set("resident_bytes", (unsigned long long)model::residentBytes());
    o.set("peak_resident_bytes", (unsigned long long)model::peakResidentBytes());
    o.set("cache_bytes", 0ULL); // no event cache: the CLI reads what it prints once
    return o;
}

void printText(const std::vector<std::string>& paths, const InfoData& t)
{
    const model::TraceHeader& h = t.header;
    const model::TraceStats& st = t.stats;
    for (const auto& path : paths)
        std::cout << "file:      " << path << "\n";
    std::cout << "source:    " << (h.source.empty() ? "?" : h.source) << " (tool " << h.toolVersion << ", clock "
              << h.clockDomain << ")\n";
    std::cout << "span:      " << formatDuration(t.end - t.start) << "\n";
    std::cout << "events:    " << t.events << " (";
    bool first = true;
    for (EventKind k : kKinds)
        if (st.byKind[size_t(k)]) {
            std::cout << (first ? "" : ", ") << st.byKind[size_t(k)] << " " << model::toString(k);
            first = false;
        }
    std::cout << ")\n";
    if (st.byKind[size_t(EventKind::Host)]) {
        std::cout << "host:      ";
        first = true;
        for (size_t hk = 0; hk < model::kHostKinds; ++hk)
            if (st.byHostKind[hk]) {
                std::cout << (first ? "" : ", ") << st.byHostKind[hk] << " " << model::toString(model::HostKind(hk));
                first = false;
            }
        std::cout << " on " << st.cpuThreads << " CPU thread" << (st.cpuThreads == 1 ? "" : "s") << "\n";
    }
    std::cout << "kernels:   " << st.kernels << ", " << formatDuration(st.kernelTime) << " of kernel time\n";
    std::cout << "steps:     " << t.steps << " (" << model::toString(stepSource(t)) << ", rule "
              << (t.stepReport.rule.empty() ? "none" : t.stepReport.rule) << ")";
    first = true;
    // An overview has the kinds the file stored; a file written before they were stores none.
    const bool notStored = t.read == "overview" && t.steps && st.stepKinds[size_t(model::StepKind::Unknown)] == t.steps;
    if (notStored)
        std::cout << ": kinds not stored in the file (--read full finds them)";
    for (size_t k = 0; k < model::kStepKinds && !notStored; ++k)
        if (st.stepKinds[k]) {
            std::cout << (first ? ": " : ", ") << st.stepKinds[k] << " " << model::toString(model::StepKind(k));
            first = false;
        }
    std::cout << "\n";
    for (const auto& g : h.gpus)
        std::cout << "gpu:       " << g.host << "/" << g.deviceIndex << " "
                  << (g.name.empty() ? "(name unknown)" : g.name) << " " << g.uuid << ", " << g.smCount << " SMs, "
                  << g.memoryBytes / (1024 * 1024) << " MiB, " << g.smClockMhz << "/" << g.memoryClockMhz << " MHz\n";
    for (const auto& r : st.ranks) {
        std::cout << "rank " << r.rank << ":    " << r.kernels << " kernels, " << formatDuration(r.kernelTime) << ", "
                  << r.steps << " steps, " << r.lanes << " lanes\n";
        if (const model::OverheadEvidence* e = model::rankOverheadEvidence(h, r.rank))
            std::cout << "overhead:  rank " << r.rank << ": "
                      << model::captureOverheadLine(*e, h.hasCapture && h.capture.steps == 0) << "\n";
    }
    for (const auto& c : h.counters)
        std::cout << "counter:   " << c.name << (c.rank >= 0 ? " rank " + std::to_string(c.rank) : "") << " = " << c.value
                  << " (" << c.severity << (c.detail.empty() ? "" : ": " + c.detail) << ")\n";
    for (const auto& w : t.warnings)
        std::cout << "warning:   " << w << "\n";
}

int runInfo(const std::vector<std::string>& args)
{
    ArgParser p("info", "FILE...",
        "Print the header, GPUs, ranks, steps, event counts, loss counters and warnings of a trace\n"
        "(.gapscope, or anything the importers open; several files open as one trace).");
    bool json = false;
    std::string read = "auto";
    p.flag("--json", "machine-readable output", json);
    bool saveOverview = false;
    addReadOption(p, read, "summed up from the file's overview in bounded memory");
    std::string stepRule;
    addStepRuleOption(p, stepRule);
    p.flag("--save-overview",
        "store the overview in a .gapscope file written before format 1.2 (which has none: each open of a "
        "large one builds it in a pass over every chunk); the file is rewritten, its events copied as they are",
        saveOverview);
    p.setPositionals(1, SIZE_MAX);
    if (int rc = p.parse(args); rc >= 0)
        return rc;
    if (!readModeValid("info", read) || !stepRuleValid("info", stepRule, &read))
        return kExitUsage;
    if (saveOverview && (p.positionals().size() != 1 || read == "full"))
        return p.usageError("--save-overview takes one .gapscope file, read through its overview");
    std::string error;
    std::optional<LargeFile> large = openLarge(p.positionals(), saveOverview ? "overview" : read, error, saveOverview);
    if (!error.empty()) {
        std::cerr << "gapscope-cli info: " << error << "\n";
        return kExitFailure;
    }
    InfoData data;
    if (large) {
        data = fromOverview(*large->overview);
    } else {
        model::ReadOptions ro;
        ro.stepRule = stepRule;
        auto trace = model::openTrace(p.positionals(), ro);
        if (!trace) {
            std::cerr << "gapscope-cli info: " << trace.error() << "\n";
            return kExitFailure;
        }
        data = fromTrace(*trace);
    }
    const std::string& path = p.positionals()[0];
    if (json)
        std::cout << json::write(infoJson(p.positionals(), data), 2) << "\n";
    else
        printText(p.positionals(), data);
    if (saveOverview) {
        if (!large) {
            std::cerr << "gapscope-cli info: " << path << ": --save-overview: not a complete .gapscope file\n";
            return kExitFailure;
        }
        if (large->overview->fromFrame()) {
            std::cerr << "gapscope-cli info: " << path << " already has its overview\n";
            return kExitOk;
        }
        large->reader.reset(); // the file is replaced
        if (Status s = model::saveOverview(path, *large->overview); !s) {
            std::cerr << "gapscope-cli info: " << s.message() << "\n";
            return kExitFailure;
        }
        std::cerr << "gapscope-cli info: saved the overview into " << path << "\n";
    }
    return kExitOk;
}

} // namespace

GAPSCOPE_CLI_COMMAND(info, "info", "print what a trace holds: header, GPUs, ranks, steps, counts, losses", runInfo);

} // namespace gapscope::cli
