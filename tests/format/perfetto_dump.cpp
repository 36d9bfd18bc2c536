// SPDX-License-Identifier: MIT
// perfetto_dump FILE: prints a Perfetto trace as its packets in protobuf text format (compressed
// packets expanded), then what a reader makes of it: tracks, slices per category, flows and any
// problem (perfettodecode.h). Used for the golden output of the Perfetto export.
#include "perfettodecode.h"

#include <cstdio>
#include <map>

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: perfetto_dump FILE\n");
        return 2;
    }
    auto d = gapscope::testing::decodePerfetto(gapscope::testing::readFile(argv[1]), true);
    if (!d) {
        std::fprintf(stderr, "perfetto_dump: %s\n", d.error().c_str());
        return 1;
    }
    std::fputs(d->text.c_str(), stdout);
    std::map<std::string, size_t> categories;
    size_t flows = 0, ends = 0;
    for (const auto& s : d->slices) {
        ++categories[s.category.empty() ? "(none)" : s.category];
        flows += s.flows.size();
        ends += s.terminatingFlows.size();
    }
    std::printf("# %llu packets (%llu compressed), %zu tracks, %zu slices, %zu flows started, %zu ended\n",
        (unsigned long long)d->packets, (unsigned long long)d->compressedPackets, d->tracks.size(), d->slices.size(),
        flows, ends);
    for (const auto& [c, n] : categories)
        std::printf("#   %s: %zu\n", c.c_str(), n);
    for (const auto& p : d->problems)
        std::printf("# problem: %s\n", p.c_str());
    return d->problems.empty() ? 0 : 1;
}
