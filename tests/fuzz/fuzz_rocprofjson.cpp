// SPDX-License-Identifier: MIT
// libFuzzer target: arbitrary bytes as a rocprofv3 JSON file (rocprofiler-sdk's results.json), walked by
// JsonCursor in small windows (so records and keys are cut everywhere), each record parsed in place by
// RocprofJsonRecords, staged and assembled into a Trace. Must never crash, hang or leak; errors are
// values. First byte: the window size (16 .. 4080 bytes). Seeds (seeds/rocprofjson): documents of the
// shapes rocprofv3 writes - streams or queues, HIP API records, symbols after the dispatches, wrong
// types, a file cut short - and a slice of the real TraceLens file.
#include "fuzzbudget.h"

#include "model/import/memorybytesource.h"
#include "model/import/rocprofjsonreader.h"
#include "model/import/traceassembler.h"

#include <cstdint>
#include <string>

using namespace gapscope::model::importer;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 1)
        return 0;
    (void)gapscope::fuzz::kBudgetSet;
    MemoryByteSource src(std::string(reinterpret_cast<const char*>(data) + 1, size - 1), "fuzz.json");
    std::vector<StagedTrace> staged;
    staged.emplace_back("rocprofv3", "fuzz.json");
    RocprofJsonReader::Options options;
    options.windowBytes = 16 + size_t(data[0]) * 16;
    options.maxRecordBytes = 1u << 20;
    RocprofJsonReader reader(src, staged[0], options);
    if (!reader.read().isOk())
        return 0;
    gapscope::model::Trace trace = TraceAssembler(std::move(staged)).assemble();
    return trace.eventCount() > (1u << 30) ? 1 : 0;
}
