// SPDX-License-Identifier: MIT
// gapscope-cli capture: arm every rank through the agent(s), show progress, write the .gapscope file
// as the merged stream arrives (client-side writing: works through an SSH tunnel without a shared
// file system). When an agent cut this client's stream (too slow), the agent's own complete file is
// fetched afterwards instead. Reports other CUPTI clients, losses and the arm latency at the end.
#include "args.h"
#include "command.h"

#include <iostream>

#ifdef GAPSCOPE_HAVE_CAPTURE_CLIENT
#include "capture/client/chunkremapper.h"
#include "capture/client/encodersink.h"
#include "capture/client/livecapture.h"
#include "capture/protocol/netutil.h"
#include "capture/protocol/tokenauth.h"
#include "model/format/counterset.h"
#include "model/format/stats.h"
#include "model/format/trace.pb.h"
#include "model/format/tracewriter.h"
#include "model/format/wholegraph.h"
#include "model/io/tracefile.h"
#include "model/io/tracemetaproto.h"
#include "model/open/traceopen.h"
#include "model/steps/steprule.h"
#include "model/trace/captureoverhead.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace gapscope::cli {
namespace {

std::atomic<bool> g_stop { false };
void onInterrupt(int)
{
    g_stop = true;
}

bool parseRecord(const std::string& list, pb::CaptureSettings& out, std::string& bad)
{
    std::stringstream ss(list);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (item == "kernels")
            out.set_kernels(true);
        else if (item == "memops")
            out.set_memory_ops(true);
        else if (item == "api")
            out.set_runtime_api(true);
        else if (item == "sync")
            out.set_synchronization(true);
        else if (item == "nvtx")
            out.set_nvtx(true);
        else if (item == "nccl")
            out.set_nccl(true);
        else {
            bad = item;
            return false;
        }
    }
    return true;
}

std::string human(double v)
{
    char b[32];
    if (v >= 1e9)
        std::snprintf(b, sizeof b, "%.2fG", v / 1e9);
    else if (v >= 1e6)
        std::snprintf(b, sizeof b, "%.2fM", v / 1e6);
    else if (v >= 1e3)
        std::snprintf(b, sizeof b, "%.1fk", v / 1e3);
    else
        std::snprintf(b, sizeof b, "%.0f", v);
    return b;
}

// Forwards events to the file's encoder and keeps, for kernels, how long after their end they became
// visible here (arrival time minus end, both CLOCK_REALTIME): a histogram of 1 ms buckets up to 10 s.
class LatencySink final : public capture::EventSink {
public:
    explicit LatencySink(capture::EventSink& inner)
        : m_in(inner)
        , m_hist(10001, 0)
    {
    }
    void setArrival(int64_t t) { m_arrival = t; }
    uint64_t count() const { return m_count; }
    double percentileMs(double p) const
    {
        uint64_t want = uint64_t(p * double(m_count)), seen = 0;
        for (size_t i = 0; i < m_hist.size(); ++i)
            if ((seen += m_hist[i]) > want)
                return double(i);
        return double(m_hist.size() - 1);
    }
    void kernel(
        uint32_t l, int64_t s, uint64_t d, uint32_t n, uint32_t c, uint32_t cfg, uint64_t g, uint64_t gn) override
    {
        const int64_t ms = (m_arrival - (s + int64_t(d))) / 1000000;
        ++m_hist[size_t(std::clamp<int64_t>(ms, 0, int64_t(m_hist.size() - 1)))];
        ++m_count;
        m_in.kernel(l, s, d, n, c, cfg, g, gn);
    }
    void memop(uint32_t l, int64_t s, uint64_t d, pb::MemopKind k, pb::CopyKind ck, uint64_t b, uint32_t f,
        uint32_t c) override
    {
        m_in.memop(l, s, d, k, ck, b, f, c);
    }
    void api(uint32_t l, int64_t s, uint64_t d, uint32_t n, uint32_t c, pb::ApiKind k) override
    {
        m_in.api(l, s, d, n, c, k);
    }
    void sync(uint32_t l, int64_t s, uint64_t d, pb::SyncKind k, uint64_t st, uint32_t c) override
    {
        m_in.sync(l, s, d, k, st, c);
    }
    void nvtx(uint32_t l, int64_t s, uint64_t d, uint32_t n, uint32_t dp, uint32_t dm) override
    {
        m_in.nvtx(l, s, d, n, dp, dm);
    }
    void host(uint32_t l, int64_t s, uint64_t d, uint32_t n, uint32_t dp, pb::HostKind k) override
    {
        m_in.host(l, s, d, n, dp, k);
    }
    void collective(uint32_t l, int64_t s, uint64_t d, uint32_t op, const format::ChunkEncoder::Collective& c) override
    {
        m_in.collective(l, s, d, op, c);
    }
    void step(const format::StepRecord& s) override { m_in.step(s); }
    void graphNode(const pb::GraphNode& g) override { m_in.graphNode(g); }
    void counter(const pb::Counter& c) override
    {
        m_counters.add(c);
        m_in.counter(c);
    }
    // Counters that came with the stream's chunks (added up), for the report.
    std::vector<pb::Counter> streamedCounters() const { return m_counters.sorted(); }

private:
    capture::EventSink& m_in;
    format::CounterSet<pb::Counter> m_counters;
    std::vector<uint64_t> m_hist;
    int64_t m_arrival = 0;
    uint64_t m_count = 0;
};

// Writes the merged stream into the output file and prints progress.
class FileListener final : public capture::LiveCapture::Listener {
public:
    FileListener(capture::LiveCapture& lc, std::string path, bool quiet)
        : m_lc(lc)
        , m_path(std::move(path))
        , m_quiet(quiet)
        , m_tty(::isatty(2))
    {
    }
    Status status() const { return m_error; }
    format::TraceWriter* writer() { return m_writer.get(); }
    uint64_t events() const { return m_events; }
    const LatencySink* latency() const { return m_latency.get(); }

    void started(size_t agent, const wire::CaptureStarted& m) override
    {
        if (!m_quiet)
            std::cerr << "capture " << m.capture_id() << " started on " << m_lc.agents()[agent]->address << " ("
                      << m.header().ranks_size() << " ranks)\n";
    }
    void chunk(const pb::Chunk& c) override
    {
        if (!m_writer && !open())
            return;
        m_events += capture::ChunkRemapper::eventCount(c);
        m_latency->setArrival(capture::realtimeNs());
        if (Status s = m_remap->apply(c, *m_latency); !s && m_error)
            m_error = s;
        if (Status s = m_writer->maybeFlush(); !s && m_error)
            m_error = s;
    }
    void progress(size_t agent, const wire::Progress& p) override
    {
        if (m_quiet)
            return;
        uint64_t lost = 0;
        for (const auto& c : p.counters())
            if (format::severityOf(c) == format::Severity::DataLoss)
                lost += c.value();
        std::ostringstream line;
        line << "[" << m_lc.agents()[agent]->address << "] " << p.phase() << "  step " << p.steps_done();
        if (p.steps_total())
            line << "/" << p.steps_total();
        line << "  " << human(double(p.events())) << " events  " << p.elapsed_s() << " s";
        if (lost)
            line << "  lost " << lost;
        std::cerr << (m_tty ? "\r" : "") << line.str() << (m_tty ? "\033[K" : "\n") << std::flush;
    }
    void streamCut(size_t agent, const wire::StreamCut& m) override
    {
        std::cerr << (m_tty ? "\n" : "") << "warning: " << m_lc.agents()[agent]->address
                  << " cut the live stream: " << m.reason() << "\n";
    }
    void done(size_t agent, const wire::CaptureDone& d) override
    {
        if (m_tty && !m_quiet)
            std::cerr << "\n";
        if (!d.ok())
            std::cerr << "error: " << m_lc.agents()[agent]->address << ": capture failed: " << d.error() << "\n";
    }
    void error(size_t, const std::string& message) override { std::cerr << "error: " << message << "\n"; }

private:
    bool open()
    {
        auto w = format::TraceWriter::create(m_path, m_lc.mergedHeader(false));
        if (!w) {
            m_error = w.status();
            return false;
        }
        m_writer = std::move(*w);
        m_remap = std::make_unique<capture::ChunkRemapper>(m_writer->encoder());
        m_sink = std::make_unique<capture::EncoderSink>(m_writer->encoder());
        m_latency = std::make_unique<LatencySink>(*m_sink);
        return true;
    }

    capture::LiveCapture& m_lc;
    std::string m_path;
    bool m_quiet, m_tty;
    std::unique_ptr<format::TraceWriter> m_writer;
    std::unique_ptr<capture::ChunkRemapper> m_remap;
    std::unique_ptr<capture::EncoderSink> m_sink;
    std::unique_ptr<LatencySink> m_latency;
    uint64_t m_events = 0;
    Status m_error;
};

void report(const capture::LiveCapture& lc, const pb::FileHeader& h, const std::string& out, uint64_t events,
    const LatencySink* latency)
{
    std::set<std::string> steps;
    std::cout << "wrote " << out << ": " << events << " events, " << h.ranks_size() << " ranks";
    if (h.capture().steps())
        std::cout << ", " << h.capture().steps() << " steps";
    std::cout << "\n";
    for (const auto& a : lc.agents()) {
        std::cout << "agent " << a->address << ": capture " << a->captureId << ", arm latency ";
        if (a->doneMsg.arm_latency_ms() >= 0) // negative: the agent did not measure it
            std::cout << a->doneMsg.arm_latency_ms() << " ms";
        else
            std::cout << "not measured";
        std::cout << ", agent file " << a->doneMsg.output_path();
        if (lc.agents().size() > 1)
            std::cout << ", clock offset " << a->shiftNs << " ns (+/- " << a->offsetErrorNs << " ns)";
        std::cout << "\n";
    }
    for (const auto& r : h.ranks()) {
        if (!r.other_cupti_client().empty())
            std::cout << "warning: rank " << r.rank() << ": another CUPTI client is active: " << r.other_cupti_client()
                      << " (torch.profiler / SGLang profiling and gapscope cannot record at the same time)\n";
        if (!r.has_overhead())
            continue;
        const model::OverheadEvidence o = model::fromProto(r).overhead;
        std::cout << "rank " << r.rank() << ": " << model::captureOverheadLine(o, h.capture().steps() == 0) << "\n";
        if (const std::string note = model::captureLastingNote(o); !note.empty())
            std::cout << "note: rank " << r.rank() << ": " << note << "\n";
    }
    if (latency && latency->count())
        std::cout << "kernel end -> visible here: p50 " << latency->percentileMs(0.5) << " ms, p99 "
                  << latency->percentileMs(0.99) << " ms over " << latency->count() << " kernels"
                  << (lc.agents().size() > 1 || lc.agents()[0]->address.rfind("127.", 0) != 0
                             ? " (other host: includes the clock offset)"
                             : "")
                  << "\n";
    bool anyLoss = false;
    std::vector<pb::Counter> counters(h.counters().begin(), h.counters().end());
    if (latency)
        for (const auto& c : latency->streamedCounters())
            counters.push_back(c);
    for (const auto& c : counters)
        if (c.value() > 0 && format::severityOf(c) != format::Severity::Info) {
            std::cout << c.severity() << ": " << c.name()
                      << (c.rank() >= 0 ? " (rank " + std::to_string(c.rank()) + ")" : "") << " = " << c.value()
                      << (c.detail().empty() ? "" : ": " + c.detail()) << "\n";
            anyLoss = anyLoss || format::severityOf(c) == format::Severity::DataLoss;
        }
    if (!anyLoss)
        std::cout << "no data lost\n";
}

// One capture through the agent(s) into `out`; the exit code. A file is reported only when it exists.
int captureOnce(const capture::LiveCaptureOptions& lo, const std::string& out, bool quiet, bool noStream)
{
    capture::LiveCapture lc(lo);
    if (Status s = lc.connect(); !s) {
        std::cerr << "gapscope-cli capture: " << s.message() << "\n";
        return int(kExitFailure);
    }
    FileListener listener(lc, out, quiet);
    std::signal(SIGINT, onInterrupt);
    Status s = lc.start();
    if (s)
        s = lc.run(listener, &g_stop);
    std::signal(SIGINT, SIG_DFL);
    bool cut = false, ok = s.isOk();
    for (const auto& a : lc.agents()) {
        cut = cut || a->cut || noStream;
        ok = ok && a->done && a->doneMsg.ok();
    }
    pb::FileHeader final = lc.mergedHeader(true);
    uint64_t events = listener.events();
    if (listener.writer()) {
        if (Status fs = listener.writer()->finish(&final); !fs)
            s = fs;
    } else if (!cut && ok) {
        // Nothing streamed (empty capture): still leave a valid file behind.
        auto w = format::TraceWriter::create(out, final);
        if (w)
            (void)(*w)->finish(&final);
    }
    if (cut) {
        for (size_t i = 0; i < lc.agents().size(); ++i) {
            if (!lc.agents()[i]->done)
                continue;
            const std::string dest = lc.agents().size() == 1 ? out : out + "." + std::to_string(i) + ".gapscope";
            if (Status fs = const_cast<capture::LiveCapture&>(lc).fetchFile(i, dest); !fs) {
                std::cerr << "gapscope-cli capture: fetching the agent's file failed: " << fs.message() << "\n";
                ok = false;
            } else {
                events = lc.agents()[i]->doneMsg.events();
                std::cerr << "fetched the agent's complete file into " << dest << "\n";
            }
        }
    }
    if (!listener.status()) {
        std::cerr << "gapscope-cli capture: " << out << ": " << listener.status().message() << "\n";
        ok = false;
    }
    if (!s)
        std::cerr << "gapscope-cli capture: " << s.message() << "\n";
    bool started = false;
    for (const auto& a : lc.agents())
        started = started || a->captureId != 0;
    struct stat sb { };
    if (started && ::stat(out.c_str(), &sb) != 0) { // never report a file that is not there
        std::cerr << "gapscope-cli capture: no file was written to " << out
                  << (events ? "" : " (nothing was recorded)") << "\n";
        return int(kExitFailure);
    }
    if (started)
        report(lc, final, out, events, cut ? nullptr : listener.latency());
    return ok ? int(kExitOk) : int(kExitFailure);
}

// After a capture by the graph rule with no rule named: each graph launch was a step, so the eager
// prefill between replays is part of one. The steps found in the events (StepFinder's auto: the prefill
// a step of its own, kinds) replace them when they are at least as many.
int refindSteps(const std::string& out)
{
    model::ReadOptions ro;
    ro.detectSteps = false; // read once: the stored steps first, then the ones found in the same events
    auto trace = model::openTrace({ out }, ro);
    if (!trace)
        return kExitOk;
    const uint32_t stored = trace->stepCount();
    bool byGraph = false;
    for (uint32_t r : trace->ranks())
        byGraph = byGraph || (!trace->steps(r).empty() && trace->steps(r).front().source == model::StepSource::Graph);
    if (!byGraph)
        return kExitOk;
    if (Status s = model::findSteps(*trace, "auto"); !s || trace->stepCount() < stored)
        return kExitOk; // the file on disk keeps the launches
    if (Status s = model::writeTraceFile(*trace, out); !s) {
        std::cerr << "gapscope-cli capture: " << s.message() << "\n";
        return kExitFailure;
    }
    std::cout << "steps: " << trace->stepCount() << " found by the " << model::toString(trace->stepReport().source)
              << " rule in place of the " << stored << " graph launches, stored in " << out << "\n";
    return kExitOk;
}

// --steps N with no step rule, on a process that annotates nothing (an unmodified eager or graph loop):
// the steps are the forwards StepFinder finds once the events are here, so the capture records a time
// window long enough to hold N of them (a short first window measures how long a forward takes; a
// longer one follows when too few were found), then stores the steps found in the file.
int captureForwards(capture::LiveCaptureOptions lo, const std::string& out, bool quiet, bool noStream, uint32_t n)
{
    double window = lo.settings.duration_s() > 0 ? lo.settings.duration_s() : 2.0;
    constexpr double kMaxWindowS = 120;
    lo.settings.set_steps(0);
    std::vector<std::string> tried; // what the rules said of the last window
    for (int attempt = 0; attempt < 4; ++attempt) {
        lo.settings.set_duration_s(window);
        if (int rc = captureOnce(lo, out, quiet, noStream); rc != kExitOk)
            return rc;
        model::ReadOptions ro;
        ro.stepRule = "auto"; // whatever the window stored, the steps are found in its events
        auto trace = model::openTrace({ out }, ro);
        if (!trace) {
            std::cerr << "gapscope-cli capture: " << trace.error() << "\n";
            return kExitFailure;
        }
        const uint32_t found = trace->stepCount();
        const model::StepReport& r = trace->stepReport();
        tried = r.tried;
        if (found >= n) {
            if (Status s = model::writeTraceFile(*trace, out); !s) {
                std::cerr << "gapscope-cli capture: " << s.message() << "\n";
                return kExitFailure;
            }
            std::cout << "steps: " << found << " found by the " << model::toString(r.source)
                      << " rule (no rule named; asked for " << n << "), stored in " << out << "\n";
            return kExitOk;
        }
        if (window >= kMaxWindowS)
            break;
        // Time enough for n forwards at the rate seen, with room for the ones the window's ends cut.
        const double perStep = found ? window / found : window;
        window = std::min(kMaxWindowS, std::max(window * 2, perStep * (n + 3) * 1.5));
        std::cerr << "gapscope-cli capture: " << found << " steps in the window, " << n << " asked for: recording "
                  << window << " s\n";
    }
    std::cerr << "gapscope-cli capture: no rule found " << n << " steps in " << window << " s of recording (";
    for (const auto& line : tried)
        std::cerr << line << "; ";
    std::cerr << "name a rule with --step-rule)\n";
    return kExitFailure;
}

int runCapture(const std::vector<std::string>& args)
{
    ArgParser p("capture", "--steps N -o FILE",
        "Capture decode steps of every rank through gapscope-agent and write them to a .gapscope file.");
    std::vector<std::string> agents;
    int64_t steps = 0, waitRanks = 0, detailEvery = 0;
    double duration = 0, armTimeout = 0;
    std::string rule, tokenFile, out, record, agentName;
    bool quiet = false, noStream = false, wholeReplays = false;
    p.multi("--agent", "ADDR", "agent host:port (default 127.0.0.1:7433); repeat for several hosts", agents);
    p.option("--steps", "N", "decode steps to record (every rank starts and stops on the same step)", steps);
    p.option("--step-rule", "RULE",
        "nvtx:PATTERN, graph or anchor:PATTERN: the ranks find steps while recording and stop on the same one; "
        "none (default) with --steps: a time window long enough for N steps, which are found afterwards as "
        "opening the file finds them (engine annotations, graph launches, forwards)",
        rule);
    p.option(
        "--duration", "S", "without --steps: record S seconds; with --steps: stop after S seconds at most", duration);
    p.option("--token-file", "F", "the agent's token (needed when it listens beyond loopback)", tokenFile);
    p.option("--record", "LIST", "kernels,memops,api,sync,nvtx,nccl (default: all)", record);
    p.option("--detail-every", "N",
        "light mode for CUDA-graph decode: kernels node by node for one block of 32 graph launches in every N, "
        "each other replay as one event (its start, end and graph); the analysis takes kernel bars from the "
        "detailed steps and step times from all. Whole replays are timed by CUDA events (GAPSCOPE_LIGHT_EVENTS=0 "
        "in the traced process: refused), or by CUPTI's graph-level trace where it sets GAPSCOPE_GRAPH_TRACE=1 "
        "(which crashed graph processes): capture/README.md. With --record kernels it costs least",
        detailEvery);
    p.flag("--whole-replays",
        "the light mode with no detailed block: every graph replay as one event (step times and gaps, no kernel "
        "bars); no kernel of a replay is recorded, so CUPTI can let go of the process after the capture",
        wholeReplays);
    p.option("--wait-ranks", "N", "wait until N ranks are registered before arming", waitRanks);
    p.option("--arm-timeout", "S", "give up when the ranks do not align within S seconds", armTimeout);
    p.option("--agent-output", "NAME", "file name of the agent's copy (in its output folder)", agentName);
    p.flag("--no-stream", "do not stream; fetch the agent's file when the capture is done", noStream);
    p.flag("--quiet", "no progress line", quiet);
    p.option("-o", "--output", "FILE", "the .gapscope file to write", out);
    p.setPositionals(0, 0);
    if (int rc = p.parse(args); rc >= 0)
        return rc;
    if (out.empty())
        return p.usageError("missing -o FILE");
    if (steps <= 0 && duration <= 0)
        return p.usageError("give --steps N (or --duration S for a time window)");
    capture::LiveCaptureOptions lo;
    if (!agents.empty())
        lo.agents = agents;
    const bool autoSteps = steps > 0 && (rule.empty() || rule == "auto");
    if (rule.empty())
        rule = "auto";
    const Expected<model::StepRule::CaptureRequest> request = model::StepRule::forCapture(rule);
    if (!request)
        return p.usageError("--step-rule: " + request.error());
    lo.settings.set_step_rule(request->rule);
    lo.settings.set_step_pattern(request->pattern);
    std::string bad;
    if (record.empty())
        record = "kernels,memops,api,sync,nvtx,nccl";
    if (!parseRecord(record, lo.settings, bad))
        return p.usageError("--record: unknown kind '" + bad + "'");
    if (detailEvery < 0 || detailEvery > 1000000)
        return p.usageError("--detail-every: give a step count from 1 to 1000000");
    if (wholeReplays && detailEvery > 0)
        return p.usageError("--whole-replays: a capture with no detailed block; leave out --detail-every");
    if ((detailEvery > 1 || wholeReplays) && !lo.settings.kernels())
        return p.usageError(
            std::string(wholeReplays ? "--whole-replays" : "--detail-every") + ": needs kernels in --record");
    lo.settings.set_detail_every(wholeReplays ? format::kDetailNone : uint32_t(detailEvery));
    if (!tokenFile.empty()) {
        auto tok = capture::loadToken(tokenFile, false);
        if (!tok) {
            std::cerr << "gapscope-cli capture: " << tok.error() << "\n";
            return kExitFailure;
        }
        lo.token = *tok;
    }
    lo.settings.set_steps(uint32_t(std::max<int64_t>(0, steps)));
    lo.settings.set_duration_s(duration);
    lo.stream = !noStream;
    lo.armTimeoutS = armTimeout;
    lo.waitForRanks = uint32_t(std::max<int64_t>(0, waitRanks));
    lo.agentOutputName = agentName;
    lo.clientName = "gapscope-cli";
    lo.clientVersion = GAPSCOPE_VERSION;
    if (!autoSteps)
        return captureOnce(lo, out, quiet, noStream);
    // No rule named: the ranks' own rule first (graph launches, every rank on the same steps; 15 s to see
    // them unless --arm-timeout says otherwise); where it finds no step (an eager loop), a time window
    // and the steps found in it.
    capture::LiveCaptureOptions first = lo;
    if (first.armTimeoutS <= 0)
        first.armTimeoutS = 15; // a loop that replays graphs launches one within seconds
    if (captureOnce(first, out, quiet, noStream) != kExitOk) {
        std::cerr << "gapscope-cli capture: no graph launches made steps: recording a time window instead\n";
        return captureForwards(lo, out, quiet, noStream, uint32_t(steps));
    }
    return refindSteps(out);
}

} // namespace
} // namespace gapscope::cli

GAPSCOPE_CLI_COMMAND(
    capture, "capture", "capture decode steps of every rank through gapscope-agent", gapscope::cli::runCapture);

#else

namespace gapscope::cli {
namespace {
int runCaptureUnavailable(const std::vector<std::string>&)
{
    std::cerr << "gapscope-cli capture: this build has no capture client (capture/ was not built)\n";
    return kExitFailure;
}
} // namespace
} // namespace gapscope::cli

GAPSCOPE_CLI_COMMAND(capture, "capture", "capture decode steps of every rank through gapscope-agent",
    gapscope::cli::runCaptureUnavailable);
#endif
