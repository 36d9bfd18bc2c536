// SPDX-License-Identifier: MIT
// libFuzzer target: arbitrary bytes as a Kineto / Chrome-trace JSON file, read in small windows (so
// window cuts land everywhere), with or without a worker thread (element-aligned units and the
// fallback when a unit does not parse), staged and assembled into a Trace. Must never crash, hang or
// leak; errors are values. First byte: bit 0 = one worker, bits 1-7 = window size, bit 1 also asks for
// an error when nothing is imported (failWhenEmpty). The bytes are also read as a file name that may carry a
// rank (SGLang's "...-TP-3.trace.json.gz").
#include "model/import/kinetoreader.h"
#include "model/import/memorybytesource.h"
#include "model/import/sglangranks.h"
#include "model/import/traceassembler.h"

#include <cstdint>
#include <string>
#include <string_view>

using namespace gapscope::model::importer;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 1)
        return 0;
    SglangRanks::Label label; // the same bytes as a file name (the rank SGLang puts there)
    (void)SglangRanks::parseFileName(std::string_view(reinterpret_cast<const char*>(data), size), label);
    const size_t window = 16 + size_t(data[0] >> 1) * 32; // 16 .. 4080 bytes
    MemoryByteSource src(std::string(reinterpret_cast<const char*>(data) + 1, size - 1), "fuzz.json");
    std::vector<StagedTrace> staged;
    staged.emplace_back("kineto", "fuzz.json");
    KinetoReader::Options options;
    options.windowBytes = window;
    options.maxEventBytes = 1u << 20;
    options.workers = data[0] & 1;
    options.failWhenEmpty = (data[0] & 2) != 0;
    KinetoReader reader(src, staged[0], options);
    if (!reader.read().isOk())
        return 0;
    gapscope::model::Trace trace = TraceAssembler(std::move(staged)).assemble();
    return trace.eventCount() > (1u << 30) ? 1 : 0;
}
