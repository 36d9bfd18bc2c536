// SPDX-License-Identifier: MIT
// libFuzzer target: arbitrary bytes as a Perfetto trace (.pftrace), framed packet by packet from small
// windows (so packets are cut everywhere), each decoded by PerfettoDecoder, compressed packets
// (deflate, zstd) inflated and read the same way, slices mapped and assembled into a Trace. Must never
// crash, hang or leak; errors are values. First byte: the window size (16 .. 4080 bytes). Seeds
// (seeds/perfetto): gapscope's own export (plain, zstd-compressed, and re-wrapped in deflate compressed_packets:
// tests/import/make_perfetto_fixtures.py), a file cut short, a trace with only a CPU thread track.
#include "fuzzbudget.h"

#include "model/import/memorybytesource.h"
#include "model/import/perfettoreader.h"
#include "model/import/traceassembler.h"

#include <cstdint>
#include <string>

using namespace gapscope::model::importer;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 1)
        return 0;
    (void)gapscope::fuzz::kBudgetSet;
    MemoryByteSource src(std::string(reinterpret_cast<const char*>(data) + 1, size - 1), "fuzz.pftrace");
    std::vector<StagedTrace> staged;
    staged.emplace_back("perfetto", "fuzz.pftrace");
    PerfettoReader::Options options;
    options.windowBytes = 16 + size_t(data[0]) * 16;
    options.maxPacketBytes = 1u << 20;
    PerfettoReader reader(src, staged[0], options);
    if (!reader.read().isOk())
        return 0;
    gapscope::model::Trace trace = TraceAssembler(std::move(staged)).assemble();
    return trace.eventCount() > (1u << 30) ? 1 : 0;
}
