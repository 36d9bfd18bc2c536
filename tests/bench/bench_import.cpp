// SPDX-License-Identifier: MIT
// bench_import: imports trace files (Kineto JSON, .json.gz, nsys SQLite) through importTraces and prints
// one JSON line: wall time, input bytes, events by kind, throughput, and the peak resident memory of
// this process (getrusage), which includes the finished Trace. One import per process, so the peak
// belongs to that import alone.
//   bench_import [--threads N] [--no-steps] FILE...
//   bench_import --read-only FILE   only reads the file through its ByteSource (the gzip inflater alone)
#include "model/import/bytesource.h"
#include "model/import/importer.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>

using namespace gapscope::model;

namespace {

double cpuSeconds()
{
    struct rusage ru { };
    getrusage(RUSAGE_SELF, &ru);
    return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// Reads FILE to its end through the importers' ByteSource, 1 MiB at a time, as the Kineto reader does.
int readOnly(const std::string& path)
{
    const auto t0 = std::chrono::steady_clock::now();
    auto src = importer::ByteSource::open(path);
    if (!src) {
        std::fprintf(stderr, "bench_import: %s\n", src.status().message().c_str());
        return 1;
    }
    std::vector<char> buf(1u << 20);
    uint64_t total = 0;
    for (;;) {
        auto n = (*src)->read(buf.data(), buf.size());
        if (!n) {
            std::fprintf(stderr, "bench_import: %s\n", n.status().message().c_str());
            return 1;
        }
        if (*n == 0)
            break;
        total += *n;
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("{\"bytes\": %llu, \"output_bytes\": %llu, \"seconds\": %.3f, \"cpu_seconds\": %.3f, \"MBps\": %.1f}\n",
        (unsigned long long)(*src)->fileSize(), (unsigned long long)total, s, cpuSeconds(), double(total) / s / 1e6);
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc == 3 && std::string(argv[1]) == "--read-only")
        return readOnly(argv[2]);
    std::vector<std::string> files;
    ReadOptions options;
    options.detectSteps = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--threads" && i + 1 < argc)
            options.threads = static_cast<unsigned>(std::stoul(argv[++i]));
        else if (a == "--steps")
            options.detectSteps = true;
        else
            files.push_back(a);
    }
    if (files.empty()) {
        std::fprintf(stderr, "usage: bench_import [--threads N] [--steps] FILE...\n");
        return 2;
    }
    uint64_t bytes = 0;
    for (const auto& f : files) {
        struct stat st { };
        if (::stat(f.c_str(), &st) == 0)
            bytes += uint64_t(st.st_size);
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto trace = importTraces(files, options);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!trace) {
        std::fprintf(stderr, "bench_import: %s\n", trace.error().c_str());
        return 1;
    }
    struct rusage ru { };
    getrusage(RUSAGE_SELF, &ru);
    const uint64_t events = trace->eventCount();
    const uint64_t kernels = trace->eventCount(EventKind::Kernel);
    const double peak = double(ru.ru_maxrss) * 1024.0;
    std::printf("{\"files\": %zu, \"bytes\": %llu, \"seconds\": %.3f, \"events\": %llu, \"kernels\": %llu, "
                "\"memops\": %llu, \"api\": %llu, \"ranges\": %llu, \"MBps\": %.1f, \"events_per_s\": %.0f, "
                "\"kernels_per_s\": %.0f, \"peak_rss_bytes\": %.0f, \"peak_bytes_per_event\": %.1f, "
                "\"trace_bytes\": %zu, \"warnings\": %zu, \"cpu_seconds\": %.3f}\n",
        files.size(), (unsigned long long)bytes, s, (unsigned long long)events, (unsigned long long)kernels,
        (unsigned long long)(trace->eventCount(EventKind::Memcpy) + trace->eventCount(EventKind::Memset)),
        (unsigned long long)trace->eventCount(EventKind::Api), (unsigned long long)trace->eventCount(EventKind::Nvtx),
        double(bytes) / s / 1e6, double(events) / s, double(kernels) / s, peak, events ? peak / double(events) : 0.0,
        trace->memoryBytes(), trace->warnings().size(),
        double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
    for (const auto& w : trace->warnings())
        std::fprintf(stderr, "warning: %s\n", w.c_str());
    return 0;
}
