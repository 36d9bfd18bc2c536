// SPDX-License-Identifier: MIT
// gapscope-cli convert: a trace to Chrome trace JSON (Perfetto), or any trace openTrace reads to .gapscope.
#include "args.h"
#include "command.h"

#include "model/chromeexport.h"
#include "model/tracefile.h"
#include "model/traceopen.h"

#include <iostream>

namespace gapscope::cli {
namespace {

bool endsWith(const std::string& s, const std::string& tail)
{
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// [from, to) covering steps a..b (inclusive) of every rank; false when the trace has none of them.
bool stepRange(const model::Trace& t, int64_t a, int64_t b, model::TimeNs& from, model::TimeNs& to)
{
    from = INT64_MAX;
    to = INT64_MIN;
    for (uint32_t r : t.ranks())
        for (const auto& s : t.steps(r))
            if (int64_t(s.index) >= a && int64_t(s.index) <= b) {
                from = std::min(from, s.start);
                to = std::max(to, s.end);
            }
    return from < to;
}

int runConvert(const std::vector<std::string>& args)
{
    ArgParser p("convert", "IN... OUT",
        "Convert a trace. OUT.json: Chrome trace-event JSON that Perfetto UI and chrome://tracing open (rank as\n"
        "process, stream/thread as thread, launch->kernel flow arrows), written as a stream.\n"
        "OUT.gapscope: the .gapscope format, from anything gapscope opens (.gapscope, Kineto JSON, nsys SQLite).");
    std::string steps;
    bool noFlows = false;
    int64_t level = 3;
    p.option("--steps", "A:B", "only the steps A..B (inclusive; JSON output)", steps);
    p.flag("--no-flows", "leave out the launch->kernel flow events (JSON output)", noFlows);
    p.option("--zstd-level", "L", "zstd level (.gapscope output, default 3)", level);
    p.setPositionals(2, SIZE_MAX);
    if (int rc = p.parse(args); rc >= 0)
        return rc;
    std::vector<std::string> inputs(p.positionals().begin(), p.positionals().end() - 1);
    const std::string out = p.positionals().back();
    const bool toJson = endsWith(out, ".json");
    if (!toJson && !endsWith(out, ".gapscope"))
        return p.usageError("OUT must end in .json (Chrome trace) or .gapscope");
    int64_t a = 0, b = INT64_MAX;
    if (!steps.empty() && !parseRange(steps, a, b))
        return p.usageError("--steps takes A:B");
    auto trace = model::openTrace(inputs);
    if (!trace) {
        std::cerr << "gapscope-cli convert: " << trace.error() << "\n";
        return kExitFailure;
    }
    if (!toJson) {
        model::WriteOptions wo;
        wo.zstdLevel = int(level);
        if (Status s = model::writeTraceFile(*trace, out, wo); !s) {
            std::cerr << "gapscope-cli convert: " << s.message() << "\n";
            return kExitFailure;
        }
        return kExitOk;
    }
    model::ChromeExportOptions co;
    co.flows = !noFlows;
    if (!steps.empty() && !stepRange(*trace, a, b, co.from, co.to)) {
        std::cerr << "gapscope-cli convert: the trace has no steps " << steps << "\n";
        return kExitFailure;
    }
    auto st = model::exportChromeJson(*trace, out, co);
    if (!st) {
        std::cerr << "gapscope-cli convert: " << st.error() << "\n";
        return kExitFailure;
    }
    std::cerr << "wrote " << out << ": " << st->events << " events, " << st->flows << " flows, " << st->bytes
              << " bytes\n";
    return kExitOk;
}

} // namespace

GAPSCOPE_CLI_COMMAND(convert, "convert", "convert to Chrome trace JSON (Perfetto) or to .gapscope", runConvert);

} // namespace gapscope::cli
