// SPDX-License-Identifier: MIT
// libFuzzer target for rocprof's SQLite file and the rows of AMD's profilers. First byte even: the
// rest is an SQLite file (seeds: rocprof v1 results.db slices, mutated into damaged databases and
// values of every type) read by RocprofDbReader. First byte odd: the rest is a stream of rows (kind
// byte + little-endian fields) fed to RocprofRowConverter directly - agents, dispatches with any
// times, ids, grid and workgroup sizes, API calls - which reaches combinations no file of a real tool
// holds. Then the trace is assembled.
#include "fuzzbudget.h"
#include "fuzzinput.h"

#include "model/import/rocprofdbreader.h"
#include "model/import/rocprofrows.h"
#include "model/import/traceassembler.h"

#include <cstdint>
#include <string>

using namespace gapscope::model::importer;

namespace {

void feedRows(gapscope::fuzz::FuzzBytes in, RocprofRowConverter& rows)
{
    std::string name;
    while (in.n > 0) {
        const uint8_t kind = *in.p++;
        --in.n;
        if (kind % 3 == 0) {
            RocprofAgentRow a;
            const std::string product = in.text();
            a.handle = in.next() % 64, a.gpuIndex = in.next() % 20 - 2, a.productName = product;
            a.computeUnits = in.next(), a.clockMhz = in.next(), a.memoryBytes = in.next();
            a.pciDomain = in.next() % 70000 - 1, a.pciLocation = in.next();
            rows.agent(a);
        } else if (kind % 3 == 1) {
            RocprofDispatchRow r;
            name = in.text();
            r.start = in.next(), r.end = in.next(), r.pid = in.next() % 8, r.tid = in.next(), r.agent = in.next() % 64;
            r.queue = in.next(), r.stream = in.next() % 1000 - 1, r.correlation = in.next();
            for (int i = 0; i < 3; ++i)
                r.grid[i] = in.next(), r.workgroup[i] = in.next();
            r.groupSegment = in.next(), r.vgprs = in.next();
            r.name = rows.kernelName(name);
            rows.dispatch(r);
        } else {
            RocprofApiRow r;
            name = in.text();
            r.start = in.next(), r.end = in.next(), r.pid = in.next() % 8, r.tid = in.next(), r.correlation = in.next();
            r.name = name;
            rows.api(r);
        }
    }
    rows.finish();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 1)
        return 0;
    (void)gapscope::fuzz::kBudgetSet;
    std::vector<StagedTrace> staged;
    staged.emplace_back("rocprof", "fuzz.db");
    if (data[0] & 1) {
        RocprofRowConverter rows(staged[0], "rocprof", "fuzz");
        feedRows(gapscope::fuzz::FuzzBytes { data + 1, size - 1 }, rows);
    } else {
        const bool ok = gapscope::fuzz::readAsFile(data + 1, size - 1, [&staged](const char* path) {
            SqliteDb db;
            return db.open(path).isOk() && RocprofDbReader(path, db, staged[0]).read().isOk();
        });
        if (!ok)
            return 0;
    }
    gapscope::model::Trace trace = TraceAssembler(std::move(staged)).assemble();
    return trace.eventCount() > (1u << 30) ? 1 : 0;
}
