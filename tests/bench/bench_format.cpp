// SPDX-License-Identifier: MIT
// Trace format benchmark: on a synth trace (default 8 ranks x 1000 steps x 1500 kernels = 12M kernel
// events) measures file bytes per kernel event, Chrome JSON bytes per kernel event (a slice of steps,
// the same events in both formats), single-thread write speed, validate (read + decode + index +
// summaries) speed, resident memory after open, and window-query latency. Medians of repeated runs;
// baselines measured in the same run: zstd decompression alone for reading, memcpy-free encode for
// writing is not separable, so the write figure is end to end.
#include "model/export/chromeexport.h"
#include "model/io/tracefile.h"
#include "model/synth/synth.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <malloc.h>
#include <random>
#include <string>
#include <sys/resource.h>
#include <unistd.h>
#include <vector>

using namespace gapscope;
using namespace gapscope::model;
using Clock = std::chrono::steady_clock;

namespace {

double secondsSince(Clock::time_point t0)
{
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// CPU time of the whole process (user + system), to tell work from waiting on a shared machine.
double cpuSeconds()
{
    struct rusage u { };
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

long rssKb()
{
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("VmRSS:", 0) == 0)
            return std::atol(line.c_str() + 6);
    return 0;
}

size_t heapBytes()
{
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

// CPU time of the calling thread in microseconds (excludes time spent preempted).
double threadCpuUs()
{
    timespec ts {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e6 + double(ts.tv_nsec) / 1e3;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

double percentile(std::vector<double> v, double p)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[std::min(v.size() - 1, size_t(p * double(v.size())))];
}

struct Row {
    std::string what;
    double value;
    std::string unit;
    std::string target; // "" = informational
    bool pass;
};
std::vector<Row> g_rows;

void row(const std::string& what, double value, const std::string& unit, const std::string& target, bool pass)
{
    g_rows.push_back({ what, value, unit, target, pass });
    std::printf("  %-52s %12.3f %-10s %s\n", what.c_str(), value, unit.c_str(),
        target.empty() ? "" : (target + (pass ? "  PASS" : "  FAIL")).c_str());
    std::fflush(stdout);
}

struct Args {
    uint32_t ranks = 8, steps = 1000, kernels = 1500, jsonSteps = 20, repeats = 3, queries = 2000;
    std::string keep;
};

bool parse(int argc, char** argv, Args& a)
{
    for (int i = 1; i < argc; ++i) {
        std::string k = argv[i];
        auto next = [&](uint32_t& v) {
            if (i + 1 >= argc)
                return false;
            v = uint32_t(std::strtoul(argv[++i], nullptr, 10));
            return true;
        };
        if ((k == "--ranks" && next(a.ranks)) || (k == "--steps" && next(a.steps))
            || (k == "--kernels" && next(a.kernels)) || (k == "--json-steps" && next(a.jsonSteps))
            || (k == "--repeats" && next(a.repeats)) || (k == "--queries" && next(a.queries)))
            continue;
        if (k == "--keep" && i + 1 < argc) {
            a.keep = argv[++i];
            continue;
        }
        std::fprintf(stderr,
            "usage: bench_format [--ranks R] [--steps S] [--kernels K] [--json-steps N] [--repeats N] "
            "[--queries N] [--keep FILE]\n");
        return false;
    }
    return true;
}

// Screen-wide windows (2000 pixels) anywhere in the trace, zoom log-uniform from 20 us to the whole trace.
void windowQueries(const Trace& t, uint32_t queries)
{
    std::mt19937_64 rng(42);
    std::vector<LaneId> gpu;
    for (const Lane& l : t.lanes())
        if (l.info.kind == LaneKind::GpuStream)
            gpu.push_back(l.id);
    const double span = double(t.endTime() - t.startTime());
    std::vector<double> lane1, screen, screenCpu, overlap;
    std::vector<FoldItem> items;
    size_t itemCount = 0;
    for (uint32_t q = 0; q < queries; ++q) {
        const double width
            = std::exp(std::log(20000.0) + (std::log(span) - std::log(20000.0)) * double(rng() % 10000) / 1e4);
        const TimeNs t0 = t.startTime() + TimeNs(double(rng() % 1000000) / 1e6 * std::max(0.0, span - width));
        const TimeNs t1 = t0 + TimeNs(width);
        const double nsPerPixel = width / 2000.0;
        auto a = Clock::now();
        const Lane& one = t.lane(gpu[q % gpu.size()]);
        one.summary.fold(one.events, t0, t1, nsPerPixel, 3.0, items);
        lane1.push_back(secondsSince(a) * 1e6);
        a = Clock::now();
        const double c0 = threadCpuUs();
        for (LaneId id : gpu) {
            const Lane& l = t.lane(id);
            l.summary.fold(l.events, t0, t1, nsPerPixel, 3.0, items);
            itemCount += items.size();
        }
        screenCpu.push_back(threadCpuUs() - c0);
        screen.push_back(secondsSince(a) * 1e6);
        a = Clock::now();
        size_t n = 0;
        for (const Lane& l : t.lanes()) {
            auto [f, e] = l.events.overlapping(t0, t1);
            n += e - f;
        }
        overlap.push_back(secondsSince(a) * 1e6);
        itemCount += n & 1;
    }
    row("window query: fold 1 GPU lane, median", median(lane1), "us", "", true);
    row("window query: fold all " + std::to_string(gpu.size()) + " GPU lanes, median", median(screen), "us", "<= 50 us",
        median(screen) <= 50);
    row("window query: fold all GPU lanes, median thread CPU time", median(screenCpu), "us", "", true);
    row("window query: fold all GPU lanes, p99", percentile(screen, 0.99), "us", "", true);
    row("window query: overlapping() on all " + std::to_string(t.laneCount()) + " lanes, median", median(overlap), "us",
        "", true);
    row("window query: fold items per screen (mean)", double(itemCount) / queries, "items", "", true);
}

} // namespace

int main(int argc, char** argv)
{
    Args a;
    if (!parse(argc, argv, a))
        return 2;
    const auto dir = std::filesystem::temp_directory_path() / ("bench_format_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string file = a.keep.empty() ? (dir / "synth.gapscope").string() : a.keep;
    SynthOptions so;
    so.ranks = a.ranks;
    so.steps = a.steps;
    so.kernelsPerStep = a.kernels;
    const uint64_t kernels = uint64_t(a.ranks) * a.steps * a.kernels;
    std::printf("bench_format: synth --ranks %u --steps %u --kernels-per-step %u (%" PRIu64 " kernels)\n", a.ranks,
        a.steps, a.kernels, kernels);

    auto t0 = Clock::now();
    if (Status s = synthesizeToFile(so, file); !s) {
        std::fprintf(stderr, "%s\n", s.message().c_str());
        return 1;
    }
    row("synth: generate + write", secondsSince(t0), "s", "< 10 s", secondsSince(t0) < 10);
    const double fileBytes = double(std::filesystem::file_size(file));
    row("file size per kernel event", fileBytes / double(kernels), "B", "<= 4 B", fileBytes / double(kernels) <= 4.0);

    // Resident memory after open: the first big allocation of the process, so the delta is clean.
    malloc_trim(0);
    const long rss0 = rssKb();
    const size_t heap0 = heapBytes();
    ReadOptions ro;
    ro.detectSteps = false;
    ro.threads = 2;
    auto trace = readTraceFile(file, ro);
    if (!trace) {
        std::fprintf(stderr, "%s\n", trace.error().c_str());
        return 1;
    }
    const uint64_t events = trace->eventCount();
    const double rssPer = double(rssKb() - rss0) * 1024.0 / double(events);
    row("events in the trace (all kinds)", double(events), "events", "", true);
    row("resident memory after open (VmRSS delta) per event", rssPer, "B", "<= 32 B", rssPer <= 32);
    row("heap in use after open (mallinfo2) per event", double(heapBytes() - heap0) / double(events), "B", "", true);
    row("Trace::memoryBytes() per event", double(trace->memoryBytes()) / double(events), "B", "", true);

    std::vector<double> reads, readCpu;
    for (uint32_t i = 0; i < a.repeats; ++i) {
        t0 = Clock::now();
        const double c0 = cpuSeconds();
        auto again = readTraceFile(file, ro);
        reads.push_back(secondsSince(t0));
        readCpu.push_back(cpuSeconds() - c0);
    }
    const double readS = median(reads);
    row("validate (read+decode+index+summaries, 2 threads), median", readS, "s", "", true);
    row("validate speed (wall clock)", double(events) / readS / 1e6, "M ev/s", ">= 20 M ev/s",
        double(events) / readS >= 20e6);
    row("validate CPU time per event (both threads)", median(readCpu) / double(events) * 1e9, "ns", "", true);
    ro.threads = 1;
    t0 = Clock::now();
    (void)readTraceFile(file, ro);
    row("validate speed, 1 thread", double(events) / secondsSince(t0) / 1e6, "M ev/s", "", true);

    std::vector<double> writes, writeCpu;
    const std::string out = (dir / "rewrite.gapscope").string();
    for (uint32_t i = 0; i < a.repeats; ++i) {
        t0 = Clock::now();
        const double c0 = cpuSeconds();
        if (Status s = writeTraceFile(*trace, out); !s) {
            std::fprintf(stderr, "%s\n", s.message().c_str());
            return 1;
        }
        writes.push_back(secondsSince(t0));
        writeCpu.push_back(cpuSeconds() - c0);
    }
    const double writeS = median(writes);
    row("write speed (1 thread, zstd 3, wall clock), median", double(events) / writeS / 1e6, "M ev/s", ">= 5 M ev/s",
        double(events) / writeS >= 5e6);
    row("write speed per CPU second", double(events) / median(writeCpu) / 1e6, "M ev/s", "", true);

    // Chrome JSON of a slice of steps, against the .gapscope bytes of the same kernels.
    ChromeExportOptions co;
    co.from = INT64_MAX;
    co.to = INT64_MIN;
    for (uint32_t r : trace->ranks())
        for (const Step& s : trace->steps(r))
            if (s.index < a.jsonSteps) {
                co.from = std::min(co.from, s.start);
                co.to = std::max(co.to, s.end);
            }
    const std::string json = (dir / "slice.json").string();
    auto st = exportChromeJson(*trace, json, co);
    if (st) {
        uint64_t sliceKernels = 0;
        for (const Lane& l : trace->lanes())
            if (l.info.kind == LaneKind::GpuStream) {
                auto [f, e] = l.events.overlapping(co.from, co.to);
                sliceKernels += e - f;
            }
        const double jsonPer = double(st->bytes) / double(std::max<uint64_t>(1, sliceKernels));
        row("Chrome JSON per kernel event (" + std::to_string(a.jsonSteps) + " steps, with flows)", jsonPer, "B", "",
            true);
        row("Chrome JSON / .gapscope size ratio", jsonPer / (fileBytes / double(kernels)), "x", ">= 100x",
            jsonPer / (fileBytes / double(kernels)) >= 100);
    }
    windowQueries(*trace, a.queries);
    std::filesystem::remove_all(dir);
    bool ok = true;
    for (const Row& r : g_rows)
        ok = ok && r.pass;
    std::printf("bench_format: %s\n", ok ? "all targets met" : "some targets missed");
    return 0;
}
