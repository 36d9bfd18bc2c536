// SPDX-License-Identifier: MIT
// bench_live: live streaming over loopback, measured end to end with the real gapscope-agent process.
//  1. baseline: decode a generated trace file directly (TraceReader + ChunkDecoder), events/s;
//  2. throughput: `gapscope-agent --replay FILE --speed 0` -> TCP -> LiveCapture -> ChunkDecoder (what the
//     viewer's model does first), events/s from StartCapture to CaptureDone, median of 3, and the ratio
//     to the baseline; the agent's peak RSS;
//  3. latency: `--speed 1` replay of a 3 s trace; per event, arrival time at the client minus the
//     event's end (both CLOCK_REALTIME on this host): p50 / p90 / p99 / max.
//  4. the same up to the viewer's model, as LiveSession does it: the receiving thread hands each chunk
//     to the viewer's LiveFeed (model/io/livefeed.h), whose own thread
//     decodes it, and a third thread moves the decoded events into the growing model::Trace with Trace::appendFrom
//     every 100 ms (the viewer's GUI timer). Throughput (median of 3, ratio to the direct file decode and to
//     readTraceFile) and kernel end -> in the viewer's model (time of the hand-over that made the
//     event visible minus its end). The repaint that follows is not included (bench_timeline).
#include "capture/client/livecapture.h"
#include "capture/protocol/netutil.h"
#include "model/format/chunkdecoder.h"
#include "model/format/tracereader.h"
#include "model/format/tracewriter.h"
#include "model/io/livefeed.h"
#include "model/io/tracefile.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace gapscope;
using namespace gapscope::capture;

namespace {

Status writeTrace(const std::string& path, int ranks, int steps, int kernels, int64_t stepNs)
{
    pb::FileHeader h;
    h.set_source("bench_live");
    for (int r = 0; r < ranks; ++r)
        h.add_ranks()->set_rank(uint32_t(r));
    auto w = format::TraceWriter::create(path, h);
    if (!w)
        return w.status();
    auto& enc = (*w)->encoder();
    std::vector<uint32_t> names;
    names.reserve(200);
    for (int i = 0; i < 200; ++i)
        names.push_back(
            enc.internString("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_" + std::to_string(i)
                + "x64_32x6_tn_align8>(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_tn_align8::Params)"));
    const int64_t t0 = realtimeNs();
    uint64_t seed = 12345;
    for (int s = 0; s < steps; ++s)
        for (int r = 0; r < ranks; ++r) {
            pb::LaneDef l;
            l.set_kind(pb::LANE_GPU_STREAM);
            l.set_rank(uint32_t(r));
            l.set_stream(7);
            const uint32_t lane = enc.lane(l);
            int64_t t = t0 + s * stepNs + r * 3000;
            const int64_t slot = stepNs / (kernels + 1);
            for (int k = 0; k < kernels; ++k) {
                seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                const uint64_t dur = uint64_t(slot / 2 + int64_t((seed >> 33) % uint64_t(slot / 3 + 1)));
                enc.addKernel(lane, t, dur, names[size_t(k % 200)], uint32_t(s * kernels + k), 0);
                t += slot;
            }
            enc.addStep(uint32_t(r), uint32_t(s), t0 + s * stepNs, uint64_t(stepNs), pb::STEP_FILE);
            if (Status st = (*w)->maybeFlush(); !st)
                return st;
        }
    return (*w)->finish();
}

// Counts decoded events and, when asked, the arrival latency of every event.
struct Model : LiveCapture::Listener, format::ChunkDecoder::Visitor {
    format::ChunkDecoder dec;
    uint64_t events = 0;
    bool latency = false;
    int64_t arrival = 0;
    std::vector<int64_t> lat;
    bool finished = false;
    std::string failure;
    void chunk(const pb::Chunk& c) override
    {
        if (latency)
            arrival = realtimeNs();
        if (Status s = dec.absorb(c); !s)
            failure = s.message();
        if (Status s = dec.validate(c); !s)
            failure = s.message();
        dec.forEach(c, *this);
    }
    void kernel(uint32_t, int64_t start, uint64_t dur, uint32_t, uint32_t, uint32_t, uint64_t, uint64_t) override
    {
        ++events;
        if (latency)
            lat.push_back(arrival - (start + int64_t(dur)));
    }
    void done(size_t, const wire::CaptureDone& d) override
    {
        finished = true;
        if (!d.ok())
            failure = d.error();
    }
    void error(size_t, const std::string& e) override { failure = e; }
};

// The viewer's model path: LiveFeed::add on the receiving thread, Trace::appendFrom every 100 ms on a
// second thread (the GUI thread in the viewer). With `latency`, each kernel's end is compared with
// the time of the hand-over that put it into the trace.
struct ViewerModel : LiveCapture::Listener {
    model::LiveFeed feed { true, true }; // as LiveSession: keeps the chunks, decodes on its own thread
    model::Trace trace;
    bool latency = false;
    std::vector<int64_t> lat;
    bool finished = false;
    std::string failure;
    std::atomic<bool> stop { false };
    std::thread drainer;
    uint64_t drains = 0;

    void begin()
    {
        drainer = std::thread([this] {
            while (!stop) {
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
                drainOnce();
            }
        });
    }
    void end()
    {
        stop = true;
        if (drainer.joinable())
            drainer.join();
        drainOnce();
    }
    void drainOnce()
    {
        std::vector<size_t> before(trace.laneCount());
        for (size_t l = 0; l < before.size(); ++l)
            before[l] = trace.lane(model::LaneId(l)).events.size();
        if (feed.drainInto(trace) == 0)
            return;
        ++drains;
        if (!latency)
            return;
        const int64_t now = realtimeNs();
        for (size_t l = 0; l < trace.laneCount(); ++l) {
            const auto& ev = trace.lane(model::LaneId(l)).events;
            for (size_t i = l < before.size() ? before[l] : 0; i < ev.size(); ++i)
                if (trace.kindOf(model::LaneId(l), i) == model::EventKind::Kernel)
                    lat.push_back(now - ev.end(i));
        }
    }
    void chunk(const pb::Chunk& c) override
    {
        if (Status s = feed.add(c); !s)
            failure = s.message();
    }
    void done(size_t, const wire::CaptureDone& d) override
    {
        finished = true;
        if (!d.ok())
            failure = d.error();
    }
    void error(size_t, const std::string& e) override { failure = e; }
};

struct Agent {
    pid_t pid = -1;
    std::string address;
    ~Agent()
    {
        if (pid > 0) {
            ::kill(pid, SIGTERM);
            ::waitpid(pid, nullptr, 0);
        }
    }
};

bool startAgent(Agent& a, const std::string& file, const char* speed, const std::string& dir)
{
    const std::string portFile = dir + "/port." + speed;
    ::unlink(portFile.c_str());
    a.pid = ::fork();
    if (a.pid == 0) {
        const std::string out = dir + "/agent-out";
        // GAPSCOPE_AGENT_BIN overrides the build's agent (binaries carried to another machine).
        const char* env = std::getenv("GAPSCOPE_AGENT_BIN");
        const char* bin = env && *env ? env : GAPSCOPE_AGENT_BIN;
        ::execl(bin, bin, "--replay", file.c_str(), "--speed", speed, "--listen", "127.0.0.1:0", "--port-file",
            portFile.c_str(), "--output-dir", out.c_str(), (char*)nullptr);
        ::_exit(127);
    }
    for (int i = 0; i < 500; ++i) {
        std::ifstream in(portFile);
        int port = 0;
        if (in >> port && port > 0) {
            a.address = "127.0.0.1:" + std::to_string(port);
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

// CPU seconds (user + system) of a process so far.
double cpuSeconds(pid_t pid)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');
    if (close == std::string::npos)
        return 0;
    std::istringstream rest(stat.substr(close + 2));
    std::string field;
    unsigned long long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
        if (i == 14)
            utime = std::stoull(field);
        if (i == 15)
            stime = std::stoull(field);
    }
    return double(utime + stime) / double(::sysconf(_SC_CLK_TCK));
}

double selfCpuSeconds()
{
    rusage ru {};
    ::getrusage(RUSAGE_SELF, &ru);
    return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

uint64_t vmHwmKb(pid_t pid)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("VmHWM:", 0) == 0)
            return std::stoull(line.substr(6));
    return 0;
}

// One capture through the agent; returns seconds from StartCapture to CaptureDone.
template <typename Listener> double captureOnce(const std::string& address, Listener& m)
{
    LiveCaptureOptions o;
    o.agents = { address };
    o.settings.set_steps(1000000); // more than the file has: the whole file
    o.clientName = "bench_live";
    LiveCapture lc(o);
    if (Status s = lc.connect(); !s) {
        m.failure = s.message();
        return 0;
    }
    const auto t0 = std::chrono::steady_clock::now();
    Status s = lc.start();
    if (s)
        s = lc.run(m);
    if (!s)
        m.failure = s.message();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double baseline(const std::string& file, uint64_t& events)
{
    const auto t0 = std::chrono::steady_clock::now();
    auto r = format::TraceReader::open(file);
    Model m;
    format::ZstdDecompressor z;
    std::string scratch;
    for (const auto& f : (*r)->frames()) {
        if (f.header.type != uint8_t(format::FrameType::Chunk))
            continue;
        pb::Chunk c;
        if ((*r)->readMessage(f, z, scratch, c))
            m.chunk(c);
    }
    events = m.events;
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double percentile(std::vector<int64_t>& v, double p)
{
    if (v.empty())
        return 0;
    const size_t i = std::min(v.size() - 1, size_t(p * double(v.size())));
    std::nth_element(v.begin(), v.begin() + long(i), v.end());
    return double(v[i]) / 1e6;
}

// Median of three runs of `run` (events/s).
template <typename Fn> std::vector<double> threeRuns(Fn run)
{
    std::vector<double> v;
    v.reserve(3);
    for (int i = 0; i < 3; ++i)
        v.push_back(run());
    std::sort(v.begin(), v.end());
    return v;
}

// One capture up to the viewer's model: events/s from StartCapture to the last hand-over.
double viewerOnce(const std::string& address, ViewerModel& m)
{
    const auto t0 = std::chrono::steady_clock::now();
    m.begin();
    captureOnce(address, m);
    m.feed.flush();
    m.end();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double loadAverage()
{
    double l1 = 0;
    if (std::ifstream la("/proc/loadavg"); la)
        la >> l1;
    return l1;
}

void row(const char* what, const char* fmt, double v, const char* target)
{
    char value[32];
    std::snprintf(value, sizeof value, fmt, v);
    std::printf("%-56s %14s %12s\n", what, value, target);
}

} // namespace

int main()
{
    char tmpl[] = "/tmp/bench_live.XXXXXX";
    const std::string dir = ::mkdtemp(tmpl);
    const std::string big = dir + "/big.gapscope", timed = dir + "/timed.gapscope";
    if (!writeTrace(big, 8, 250, 1000, 5000000) || !writeTrace(timed, 8, 600, 100, 5000000)) {
        std::fprintf(stderr, "bench_live: cannot write the test traces in %s\n", dir.c_str());
        return 3;
    }
    const double load0 = loadAverage();
    uint64_t baseEvents = 0;
    const auto base = threeRuns([&] { return double(baseEvents) / baseline(big, baseEvents); });
    // Opening the same file as a Trace (what File > Open does): the model-side baseline.
    const double openCpu0 = selfCpuSeconds();
    uint64_t openedEvents = 0;
    const auto opened = threeRuns([&] {
        const auto t0 = std::chrono::steady_clock::now();
        auto t = model::readTraceFile(big);
        const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        openedEvents = t ? t->eventCount() : 0;
        return t ? double(t->eventCount()) / sec : 0.0;
    });
    const double openCpu = selfCpuSeconds() - openCpu0;

    Agent fast;
    if (!startAgent(fast, big, "0", dir)) {
        std::fprintf(stderr, "bench_live: gapscope-agent did not start\n");
        return 3;
    }
    uint64_t events = 0;
    std::string failure;
    double agentCpu0 = cpuSeconds(fast.pid), clientCpu0 = selfCpuSeconds();
    const auto rates = threeRuns([&] {
        Model m;
        const double sec = captureOnce(fast.address, m);
        if (!m.failure.empty() || m.events != baseEvents)
            failure = "throughput run: " + m.failure + " (" + std::to_string(m.events) + " events)";
        events = m.events;
        return double(m.events) / sec;
    });
    const double agentCpu = cpuSeconds(fast.pid) - agentCpu0, clientCpu = selfCpuSeconds() - clientCpu0;
    agentCpu0 = cpuSeconds(fast.pid);
    clientCpu0 = selfCpuSeconds();
    uint64_t drains = 0;
    const auto viewerRates = threeRuns([&] {
        ViewerModel m;
        const double sec = viewerOnce(fast.address, m);
        if (!m.failure.empty() || m.trace.eventCount() != baseEvents)
            failure = "viewer-model run: " + m.failure + " (" + std::to_string(m.trace.eventCount()) + " events)";
        drains = m.drains;
        return double(m.trace.eventCount()) / sec;
    });
    const double viewerAgentCpu = cpuSeconds(fast.pid) - agentCpu0, viewerCpu = selfCpuSeconds() - clientCpu0;
    const double rssMb = double(vmHwmKb(fast.pid)) / 1024.0;
    if (!failure.empty()) {
        std::fprintf(stderr, "bench_live: %s, expected %llu\n", failure.c_str(), (unsigned long long)baseEvents);
        return 1;
    }

    Agent paced;
    if (!startAgent(paced, timed, "1", dir))
        return 3;
    Model lm;
    lm.latency = true;
    lm.lat.reserve(500000);
    const double sec = captureOnce(paced.address, lm);
    ViewerModel vm;
    vm.latency = true;
    vm.lat.reserve(500000);
    viewerOnce(paced.address, vm);
    if (!lm.failure.empty() || !vm.failure.empty()) {
        std::fprintf(stderr, "bench_live: latency run: %s%s\n", lm.failure.c_str(), vm.failure.c_str());
        return 1;
    }
    const double perM = 3.0 * double(events) / 1e6;
    std::printf("live streaming (loopback, gapscope-agent --replay), %ld CPUs\n", ::sysconf(_SC_NPROCESSORS_ONLN));
    std::printf("%-56s %14s %12s\n", "measure", "median of 3", "target");
    row("file decode baseline (TraceReader + ChunkDecoder, 1 thread)", "%.2f M/s", base[1] / 1e6, "-");
    row("file -> Trace baseline (readTraceFile)", "%.2f M/s", opened[1] / 1e6, "-");
    row("  CPU per million events (all its threads)", "%.3f s", openCpu / (3.0 * double(openedEvents) / 1e6), "-");
    row("agent -> client decoder, speed 0 (events/s)", "%.2f M/s", rates[1] / 1e6, "-");
    row("  ratio to the file decode", "%.2fx", rates[1] / base[1], "-");
    row("  agent CPU per million events", "%.3f s", agentCpu / perM, "-");
    row("  client CPU per million events", "%.3f s", clientCpu / perM, "-");
    row("agent -> viewer's model (LiveFeed + appendFrom/100 ms)", "%.2f M/s", viewerRates[1] / 1e6, ">= 5 M/s");
    row("  ratio to the file decode", "%.2fx", viewerRates[1] / base[1], "-");
    row("  ratio to readTraceFile", "%.2fx", viewerRates[1] / opened[1], "-");
    row("  agent CPU per million events", "%.3f s", viewerAgentCpu / perM, "-");
    row("  viewer CPU per million events (receive+decode+append)", "%.3f s", viewerCpu / perM, "-");
    row("agent peak RSS during the 6 runs", "%.1f MB", rssMb, "<= 256 MB");
    row("kernel end -> client decoder, p50 (speed 1)", "%.1f ms", percentile(lm.lat, 0.5), "-");
    row("kernel end -> client decoder, p99", "%.1f ms", percentile(lm.lat, 0.99), "-");
    row("kernel end -> viewer's model, p50 (speed 1)", "%.1f ms", percentile(vm.lat, 0.5), "-");
    row("kernel end -> viewer's model, p90", "%.1f ms", percentile(vm.lat, 0.9), "-");
    row("kernel end -> viewer's model, p99", "%.1f ms", percentile(vm.lat, 0.99), "<= 250 ms");
    row("kernel end -> viewer's model, max", "%.1f ms", percentile(vm.lat, 1.0), "-");
    std::printf("load average (1 min): %.1f at the start, %.1f at the end\n", load0, loadAverage());
    std::printf("(%llu events per throughput run; client decoder min/max %.2f/%.2f M/s; viewer model min/max "
                "%.2f/%.2f M/s, %llu hand-overs in the last run; latency runs %zu + %zu kernels in %.2f s each)\n",
        (unsigned long long)events, rates.front() / 1e6, rates.back() / 1e6, viewerRates.front() / 1e6,
        viewerRates.back() / 1e6, (unsigned long long)drains, lm.lat.size(), vm.lat.size(), sec);
    std::string cmd = "rm -rf '" + dir + "'";
    (void)std::system(cmd.c_str()); // the folder is scratch: a failure to remove it is not the benchmark's
    return 0;
}
