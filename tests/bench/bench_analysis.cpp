// SPDX-License-Identifier: MIT
// bench_analysis: the gap analysis of a large trace (default: synth 8 ranks x 1000 steps x 1500
// kernels per step = 12M kernel events). Reads the trace once, then reports the median of N rounds:
//   baseline  a plain pass over every event of every lane (start + duration + kind), the floor any
//             analysis pays;
//   analyze   GapAnalyzer construction (classification, windows, syncs, collective matching, the
//             sweep of every rank x step) + AnalysisReport (critical path, medians, stragglers,
//             findings), with the default thread count and with one thread;
//   json      the report's JSON with every step's bars, written to a string;
//   classify  the default table on each distinct kernel name (of the trace, plus NAMES_TSV, e.g.
//             tests/analysis/kernelnames.tsv), against std::regex (ECMAScript) on the same rules.
// Usage: bench_analysis TRACE [ROUNDS [NAMES_TSV]]   (bench_analysis.sh makes the trace with synth)
#include "model/analysis/analysisreport.h"
#include "model/io/tracefile.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <regex>
#include <vector>

using namespace gapscope;
using namespace gapscope::model;
using Clock = std::chrono::steady_clock;

namespace {

// Process CPU time (all threads) in ms: on a shared, loaded box it tells the work apart from the wait.
double cpuMs()
{
    return 1000.0 * double(std::clock()) / CLOCKS_PER_SEC;
}

double g_lastCpuMs = 0; // median CPU time of the last medianMs() call

template <typename F> double medianMs(int rounds, F&& f)
{
    std::vector<double> t, cpu;
    for (int r = 0; r < rounds; ++r) {
        auto t0 = Clock::now();
        double c0 = cpuMs();
        f();
        cpu.push_back(cpuMs() - c0);
        t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    std::sort(cpu.begin(), cpu.end());
    g_lastCpuMs = cpu[cpu.size() / 2];
    return t[t.size() / 2];
}

int64_t plainPass(const Trace& trace)
{
    int64_t sum = 0;
    for (const Lane& lane : trace.lanes())
        for (size_t i = 0; i < lane.events.size(); ++i)
            sum += lane.events.start(i) + lane.events.duration(i) + int64_t(trace.kindOf(lane.id, i));
    return sum;
}

// Microseconds per name: the classifier (PatternMatcher) and plain std::regex on the same rules.
std::pair<double, double> classifyUs(const std::vector<std::string>& names, int rounds, int64_t& sink)
{
    const auto& k = KernelClassifier::builtinDefault();
    std::vector<std::regex> plain;
    for (const auto& r : k.rules())
        plain.emplace_back(r.pattern, std::regex::ECMAScript | std::regex::icase | std::regex::nosubs);
    double fast = medianMs(rounds, [&] {
        for (const auto& n : names)
            sink += k.classify(n);
    });
    double slow = medianMs(std::min(rounds, 3), [&] {
        for (const auto& n : names)
            for (size_t i = 0; i < plain.size(); ++i)
                if (std::regex_search(n, plain[i])) {
                    sink += int64_t(i);
                    break;
                }
    });
    double per = 1000.0 / double(std::max<size_t>(1, names.size()));
    return { fast * per, slow * per };
}

std::vector<std::string> distinctNames(const Trace& t, const char* tsv)
{
    std::vector<std::string> names;
    std::vector<uint8_t> seen(t.stringCount(), 0);
    for (const Lane& lane : t.lanes())
        if (lane.info.kind == LaneKind::GpuStream)
            for (size_t i = 0; i < lane.events.size(); ++i)
                if (StringId id = lane.events.name(i); id < seen.size() && !seen[id]) {
                    seen[id] = 1;
                    names.emplace_back(t.str(id));
                }
    std::ifstream f(tsv ? tsv : "");
    for (std::string line; std::getline(f, line);)
        if (!line.empty() && line[0] != '#' && line.find('\t') != std::string::npos)
            names.push_back(line.substr(line.find('\t') + 1));
    return names;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_analysis TRACE [ROUNDS]\n");
        return 2;
    }
    const int rounds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
    auto t0 = Clock::now();
    auto trace = readTraceFile(argv[1]);
    if (!trace) {
        std::fprintf(stderr, "bench_analysis: %s\n", trace.error().c_str());
        return 1;
    }
    double readMs = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    const Trace& t = trace.value();
    std::printf("trace: %s: %llu events (%llu kernels), %zu ranks, %u steps; read in %.0f ms\n", argv[1],
        (unsigned long long)t.eventCount(), (unsigned long long)t.eventCount(EventKind::Kernel), t.ranks().size(),
        t.stepCount(), readMs);

    int64_t sink = 0;
    double baseline = medianMs(rounds, [&] { sink += plainPass(t); });
    double baselineCpu = g_lastCpuMs;
    auto analyze = [&](unsigned threads) {
        GapAnalyzer::Options o;
        o.threads = threads;
        GapAnalyzer a(t, KernelClassifier::builtinDefault(), StepBudget {}, o);
        AnalysisReport::Options ro;
        AnalysisReport report(a, ro);
        sink += int64_t(report.findings().size()) + a.critical().rank;
    };
    double full = medianMs(rounds, [&] { analyze(0); });
    double fullCpu = g_lastCpuMs;
    double single = medianMs(rounds, [&] { analyze(1); });
    double singleCpu = g_lastCpuMs;
    GapAnalyzer a(t, KernelClassifier::builtinDefault(), StepBudget {});
    size_t jsonBytes = 0;
    double json = medianMs(std::min(rounds, 3), [&] {
        AnalysisReport report(a, AnalysisReport::Options {});
        jsonBytes = json::write(report.toJson(), -1).size();
    });
    double jsonCpu = g_lastCpuMs;
    std::printf(
        "%-34s %10s %12s %10s %12s\n", "phase (median of rounds)", "wall ms", "x baseline", "CPU ms", "x baseline");
    auto line = [&](const char* what, double wall, double cpu) {
        std::printf(
            "%-34s %10.1f %12.1f %10.1f %12.1f\n", what, wall, wall / baseline, cpu, cpu / std::max(baselineCpu, 1e-9));
    };
    line("baseline: plain pass over events", baseline, baselineCpu);
    line("analyze (default threads)", full, fullCpu);
    line("analyze (1 thread)", single, singleCpu);
    line("report JSON with every step", json, jsonCpu);
    std::printf("(JSON: %.1f MB)\n", double(jsonBytes) / 1e6);
    std::printf("events per second analysed (default threads): %.1f M\n", double(t.eventCount()) / full / 1e3);
    auto names = distinctNames(t, argc > 3 ? argv[3] : nullptr);
    auto [fastUs, plainUs] = classifyUs(names, rounds, sink);
    std::printf("classify %zu distinct names, default table: %.1f us per name; std::regex on the same rules: %.1f us "
                "(%.0fx)\n",
        names.size(), fastUs, plainUs, plainUs / std::max(fastUs, 1e-9));
    return sink == 42 ? 3 : 0; // keep the work observable
}
