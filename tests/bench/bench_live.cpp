// SPDX-License-Identifier: MIT
// bench_live: live streaming over loopback, measured end to end with the real gapscope-agent process.
//  1. baseline: decode a generated trace file directly (TraceReader + ChunkDecoder), events/s;
//  2. throughput: `gapscope-agent --replay FILE --speed 0` -> TCP -> LiveCapture -> ChunkDecoder (what the
//     viewer's model does first), events/s from StartCapture to CaptureDone, median of 3, and the ratio
//     to the baseline; the agent's peak RSS;
//  3. latency: `--speed 1` replay of a 3 s trace; per event, arrival time at the client minus the
//     event's end (both CLOCK_REALTIME on this host): p50 / p90 / p99 / max.
#include "capture/agent/client/livecapture.h"
#include "capture/protocol/netutil.h"
#include "model/format/chunkdecoder.h"
#include "model/format/tracereader.h"
#include "model/format/tracewriter.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <sys/resource.h>
#include <string>
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
        ::execl(bin, bin, "--replay", file.c_str(), "--speed", speed, "--listen",
            "127.0.0.1:0", "--port-file", portFile.c_str(), "--output-dir", out.c_str(), (char*)nullptr);
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
double captureOnce(const std::string& address, Model& m)
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
    uint64_t baseEvents = 0;
    std::vector<double> base;
    for (int i = 0; i < 3; ++i)
        base.push_back(baseline(big, baseEvents) > 0 ? double(baseEvents) / baseline(big, baseEvents) : 0);
    std::sort(base.begin(), base.end());

    Agent fast;
    if (!startAgent(fast, big, "0", dir)) {
        std::fprintf(stderr, "bench_live: gapscope-agent did not start\n");
        return 3;
    }
    std::vector<double> rates;
    uint64_t events = 0;
    const double agentCpu0 = cpuSeconds(fast.pid), clientCpu0 = selfCpuSeconds();
    for (int i = 0; i < 3; ++i) {
        Model m;
        const double sec = captureOnce(fast.address, m);
        if (!m.failure.empty() || m.events != baseEvents) {
            std::fprintf(stderr, "bench_live: throughput run: %s (%llu of %llu events)\n", m.failure.c_str(),
                (unsigned long long)m.events, (unsigned long long)baseEvents);
            return 1;
        }
        events = m.events;
        rates.push_back(double(m.events) / sec);
    }
    std::sort(rates.begin(), rates.end());
    const double agentCpu = cpuSeconds(fast.pid) - agentCpu0, clientCpu = selfCpuSeconds() - clientCpu0;
    const double rssMb = double(vmHwmKb(fast.pid)) / 1024.0;

    Agent paced;
    if (!startAgent(paced, timed, "1", dir))
        return 3;
    Model lm;
    lm.latency = true;
    lm.lat.reserve(500000);
    const double sec = captureOnce(paced.address, lm);
    if (!lm.failure.empty()) {
        std::fprintf(stderr, "bench_live: latency run: %s\n", lm.failure.c_str());
        return 1;
    }
    std::printf("live streaming (loopback, gapscope-agent --replay -> LiveCapture -> ChunkDecoder), build box\n");
    std::printf("%-48s %14s %12s\n", "measure", "median", "target");
    std::printf("%-48s %11.2f M/s %12s\n", "file decode baseline (events/s)", base[1] / 1e6, "-");
    std::printf("%-48s %11.2f M/s %12s\n", "agent -> client, speed 0 (events/s)", rates[1] / 1e6, ">= 5 M/s");
    std::printf("%-48s %13.2fx %12s\n", "  ratio to file decode", rates[1] / base[1], "-");
    std::printf("%-48s %11.1f MB %12s\n", "agent peak RSS during the 3 runs", rssMb, "<= 256 MB");
    std::printf("%-48s %11.3f s  %12s\n", "  agent CPU per million events", agentCpu / (3.0 * double(events) / 1e6), "-");
    std::printf("%-48s %11.3f s  %12s\n", "  client CPU per million events", clientCpu / (3.0 * double(events) / 1e6), "-");
    long load = 0;
    if (std::ifstream la("/proc/loadavg"); la) {
        double l1 = 0;
        la >> l1;
        load = std::lround(l1);
    }
    std::printf("%-48s %14ld %12s\n", "load average (1 min) at the end", load, "-");
    std::printf("%-48s %11.1f ms %12s\n", "kernel end -> visible, p50 (speed 1)", percentile(lm.lat, 0.5), "-");
    std::printf("%-48s %11.1f ms %12s\n", "kernel end -> visible, p90", percentile(lm.lat, 0.9), "-");
    std::printf("%-48s %11.1f ms %12s\n", "kernel end -> visible, p99", percentile(lm.lat, 0.99), "<= 250 ms");
    std::printf("%-48s %11.1f ms %12s\n", "kernel end -> visible, max", percentile(lm.lat, 1.0), "-");
    std::printf("(%llu events per throughput run, min/max %.2f/%.2f M/s; latency run %zu events in %.2f s)\n",
        (unsigned long long)events, rates.front() / 1e6, rates.back() / 1e6, lm.lat.size(), sec);
    std::string cmd = "rm -rf '" + dir + "'";
    return std::system(cmd.c_str()) == 0 ? 0 : 0;
}
