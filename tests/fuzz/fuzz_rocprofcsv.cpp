// SPDX-License-Identifier: MIT
// libFuzzer target: arbitrary bytes as rocprof v1's kernel trace CSV (results.csv): CsvReader's
// records (quotes, line ends, errors with their place), the header, each row through RocprofV1Rows
// into RocprofRowConverter, then the trace assembled. Must never crash, hang or leak; a malformed line
// is skipped and counted, never fatal. Seeds (seeds/rocprofcsv): the head of the real results.csv,
// bad lines of each kind, a file cut inside a quoted field, CRLF line ends.
#include "fuzzbudget.h"

#include "model/import/memorybytesource.h"
#include "model/import/rocprofcsvreader.h"
#include "model/import/traceassembler.h"

#include <cstdint>
#include <string>

using namespace gapscope::model::importer;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    (void)gapscope::fuzz::kBudgetSet;
    MemoryByteSource src(std::string(reinterpret_cast<const char*>(data), size), "fuzz.csv");
    std::vector<StagedTrace> staged;
    staged.emplace_back("rocprof", "fuzz.csv");
    RocprofCsvReader reader(src, staged[0]);
    if (!reader.read().isOk())
        return 0;
    gapscope::model::Trace trace = TraceAssembler(std::move(staged)).assemble();
    return trace.eventCount() > (1u << 30) ? 1 : 0;
}
