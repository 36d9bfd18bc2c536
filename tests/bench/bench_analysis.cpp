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
#include "model/tracefile.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <regex>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace gapscope;
using namespace gapscope::model;
using Clock = std::chrono::steady_clock;

namespace {

template <typename F> double medianMs(int rounds, F&& f)
{
    std::vector<double> t;
    for (int r = 0; r < rounds; ++r) {
        auto t0 = Clock::now();
        f();
        t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
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
    auto analyze = [&](unsigned threads) {
        GapAnalyzer::Options o;
        o.threads = threads;
        GapAnalyzer a(t, KernelClassifier::builtinDefault(), StepBudget {}, o);
        AnalysisReport::Options ro;
        AnalysisReport report(a, ro);
        sink += int64_t(report.findings().size()) + a.critical().rank;
    };
    double full = medianMs(rounds, [&] { analyze(0); });
    double single = medianMs(rounds, [&] { analyze(1); });
    GapAnalyzer a(t, KernelClassifier::builtinDefault(), StepBudget {});
    size_t jsonBytes = 0;
    double json = medianMs(std::min(rounds, 3), [&] {
        AnalysisReport report(a, AnalysisReport::Options {});
        jsonBytes = json::write(report.toJson(), -1).size();
    });
    std::printf("%-34s %10s %12s\n", "phase (median of rounds)", "ms", "x baseline");
    std::printf("%-34s %10.1f %12.1f\n", "baseline: plain pass over events", baseline, 1.0);
    std::printf("%-34s %10.1f %12.1f\n", "analyze (default threads)", full, full / baseline);
    std::printf("%-34s %10.1f %12.1f\n", "analyze (1 thread)", single, single / baseline);
    std::printf("%-34s %10.1f %12.1f   (%.1f MB)\n", "report JSON with every step", json, json / baseline,
        double(jsonBytes) / 1e6);
    std::printf("events per second analysed (default threads): %.1f M\n", double(t.eventCount()) / full / 1e3);
    auto names = distinctNames(t, argc > 3 ? argv[3] : nullptr);
    auto [fastUs, plainUs] = classifyUs(names, rounds, sink);
    std::printf("classify %zu distinct names, default table: %.1f us per name; std::regex on the same rules: %.1f us "
                "(%.0fx)\n",
        names.size(), fastUs, plainUs, plainUs / std::max(fastUs, 1e-9));
    return sink == 42 ? 3 : 0; // keep the work observable
}
