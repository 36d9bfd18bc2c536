// SPDX-License-Identifier: MIT
// gapscope-cli validate: decode every frame of a .gapscope file, build the index and summaries, and
// fail on any problem (checksums, truncation, damaged index, chunks that do not decode, counts that
// do not match the index).
#include "args.h"
#include "command.h"

#include "model/base/json.h"
#include "model/base/taskpool.h"
#include "model/format/tracereader.h"
#include "model/io/tracefile.h"
#include "model/trace/tracesummary.h"

#include <algorithm>
#include <chrono>
#include <iostream>

namespace gapscope::cli {
namespace {

// Checks the loaded trace against the file's own bookkeeping; returns problems found.
std::vector<std::string> crossCheck(const format::TraceReader& reader, const model::Trace& t)
{
    std::vector<std::string> problems;
    for (const auto& c : t.header().counters)
        if (c.name.rfind("read_", 0) == 0)
            problems.push_back(c.name + " = " + std::to_string(c.value) + " (" + c.detail + ")");
    if (reader.hasIndex() && reader.index().total_events() != t.eventCount())
        problems.push_back("index says " + std::to_string(reader.index().total_events()) + " events, decoded "
            + std::to_string(t.eventCount()));
    for (const model::Lane& lane : t.lanes()) {
        const auto& ev = lane.events;
        auto totals = lane.summary.totals(ev, INT64_MIN / 4, INT64_MAX / 4);
        if (totals.count != ev.size())
            problems.push_back("lane " + lane.info.key() + ": summary counts " + std::to_string(totals.count)
                + " events, lane holds " + std::to_string(ev.size()));
        for (size_t i = 1; i < ev.size(); ++i)
            if (ev.start(i) < ev.start(i - 1)) {
                problems.push_back("lane " + lane.info.key() + ": events out of order at " + std::to_string(i));
                break;
            }
    }
    return problems;
}

int runValidate(const std::vector<std::string>& args)
{
    ArgParser p("validate", "FILE",
        "Decode every frame of a .gapscope file, build the index and the summaries, and check them against\n"
        "each other. Exit 0 when the file is whole, 1 when anything is wrong (each problem is listed).");
    bool json = false;
    int64_t threads = 0;
    p.flag("--json", "machine-readable output", json);
    p.option("--threads", "N", "decode threads (default: 2, or fewer cores)", threads);
    p.setPositionals(1, 1);
    if (int rc = p.parse(args); rc >= 0)
        return rc;
    const std::string& path = p.positionals()[0];
    format::FormatError kind = format::FormatError::None;
    if (threads > 0) // the pool is sized once: big enough for what was asked
        model::TaskPool::configure(std::max(model::TaskPool::defaultSize(), unsigned(threads)));
    model::ReadOptions ro;
    ro.detectSteps = false;
    ro.threads = unsigned(threads > 0 ? threads : 0);
    ro.error = &kind;
    const auto t0 = std::chrono::steady_clock::now();
    auto trace = model::readTraceFile(path, ro);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!trace) {
        std::cerr << "gapscope-cli validate: " << trace.error() << "\n";
        return kind == format::FormatError::Io ? kExitFailure : kExitProblems;
    }
    auto reader = format::TraceReader::open(path);
    if (!reader) {
        std::cerr << "gapscope-cli validate: " << reader.error() << "\n";
        return kExitFailure;
    }
    const std::vector<std::string> problems = crossCheck(**reader, *trace);
    const uint64_t events = trace->eventCount();
    if (json) {
        json::Value o = json::Value::object();
        o.set("file", path);
        o.set("ok", problems.empty());
        o.set("events", (unsigned long long)events);
        o.set("frames", (unsigned long long)(*reader)->frames().size());
        o.set("indexed", (*reader)->hasIndex());
        o.set("seconds", seconds);
        o.set("events_per_second", seconds > 0 ? double(events) / seconds : 0.0);
        json::Value pr = json::Value::array();
        for (const auto& s : problems)
            pr.push(s);
        o.set("problems", std::move(pr));
        json::Value notes = json::Value::array();
        for (const auto& w : trace->warnings())
            notes.push(w);
        o.set("warnings", std::move(notes));
        std::cout << json::write(o, 2) << "\n";
    } else {
        for (const auto& w : trace->warnings())
            std::cout << "warning: " << w << "\n";
        for (const auto& s : problems)
            std::cout << "problem: " << s << "\n";
        std::cout << (problems.empty() ? "ok: " : "FAILED: ") << path << ": " << events << " events in "
                  << (*reader)->frames().size() << " frames" << ((*reader)->hasIndex() ? " (indexed)" : " (no index)")
                  << ", read in " << seconds << " s (" << double(events) / std::max(seconds, 1e-9) / 1e6
                  << " M events/s)\n";
    }
    return problems.empty() ? kExitOk : kExitProblems;
}

} // namespace

GAPSCOPE_CLI_COMMAND(validate, "validate", "decode and check every frame of a .gapscope file", runValidate);

} // namespace gapscope::cli
