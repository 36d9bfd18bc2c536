// SPDX-License-Identifier: MIT
// libFuzzer target: arbitrary bytes as one file of rocprofv3's CSV output, the first byte choosing which
// (agent_info, hip_api_trace, marker_api_trace, kernel_trace, memory_copy_trace: the name tells the reader
// the kind; the header may say another): CsvReader's records, the columns found by name, agents "Agent N"
// or N, each row through RocprofRowConverter, then the trace assembled. No file of the set is beside it,
// so only these bytes are read. Must never crash, hang or leak; a malformed row is skipped and counted.
// Seeds (seeds/rocprofv3csv): a file of each kind in the columns of rocprofiler-sdk 0.4 and 1.0.
#include "fuzzbudget.h"

#include "model/import/memorybytesource.h"
#include "model/import/rocprofv3csvreader.h"
#include "model/import/traceassembler.h"

#include <cstdint>
#include <string>

using namespace gapscope::model::importer;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    (void)gapscope::fuzz::kBudgetSet;
    if (size == 0)
        return 0;
    static const char* const kNames[]
        = { "/nonexistent/1_agent_info.csv", "/nonexistent/1_hip_api_trace.csv", "/nonexistent/1_marker_api_trace.csv",
              "/nonexistent/1_kernel_trace.csv", "/nonexistent/1_memory_copy_trace.csv" };
    const std::string name = kNames[data[0] % 5];
    MemoryByteSource src(std::string(reinterpret_cast<const char*>(data + 1), size - 1), name);
    std::vector<StagedTrace> staged;
    staged.emplace_back("rocprofv3", name);
    Rocprofv3CsvReader reader(src, staged[0]);
    if (!reader.read().isOk())
        return 0;
    gapscope::model::Trace trace = TraceAssembler(std::move(staged)).assemble();
    return trace.eventCount() > (1u << 30) ? 1 : 0;
}
