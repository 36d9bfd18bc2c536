// SPDX-License-Identifier: MIT
// libFuzzer target for the Nsight Systems importer. First byte even: the rest is an SQLite file (seeds
// are real nsys-shaped reports, mutated into damaged databases) read by NsysReader. First byte odd: the
// rest is a stream of rows (kind byte + little-endian fields) fed to NsysRowConverter directly, which
// reaches value combinations a valid database rarely holds. Then the trace is assembled. The SQLite
// seeds are the fixtures of make_nsys_fixture.py (nsys exports of several shapes, an nvprof file, an
// export without CUDA activity) behind a 0 byte.
#include "model/import/nsysreader.h"
#include "model/import/nsysrows.h"
#include "model/import/traceassembler.h"
#include "tests/fuzz/fuzzinput.h"

#include <cstdint>
#include <string>

using namespace gapscope::model::importer;

namespace {

void feedRows(gapscope::fuzz::FuzzBytes in, NsysRowConverter& rows)
{
    std::string text;
    while (in.n > 0) {
        const uint8_t kind = *in.p++;
        --in.n;
        switch (kind % 13) {
        case 0:
            text.assign(reinterpret_cast<const char*>(in.p), in.n < 12 ? in.n : 12);
            rows.string(in.next() % 64, text);
            break;
        case 1: {
            NsysKernelRow r;
            r.start = in.next(), r.end = in.next(), r.deviceId = in.next() % 16, r.streamId = in.next();
            r.correlationId = in.next(), r.globalPid = in.next(), r.nameId = in.next() % 64, r.grid[0] = in.next();
            r.shortNameId = in.next() % 64, r.graphId = in.next();
            rows.kernel(r);
            break;
        }
        case 2: {
            NsysMemopRow r;
            r.memset = in.next() & 1, r.start = in.next(), r.end = in.next(), r.globalPid = in.next();
            r.bytes = in.next(), r.copyKind = in.next();
            rows.memop(r);
            break;
        }
        case 3: {
            NsysApiRow r;
            r.start = in.next(), r.end = in.next(), r.globalTid = in.next(), r.correlationId = in.next();
            r.nameId = in.next() % 64;
            rows.api(r);
            break;
        }
        case 4: {
            NsysNvtxRow r;
            r.start = in.next(), r.end = in.next(), r.globalTid = in.next(), r.eventType = in.next() % 64;
            r.textId = in.next() % 64;
            rows.nvtx(r);
            break;
        }
        case 5: {
            NsysSyncRow r;
            r.start = in.next(), r.end = in.next(), r.globalPid = in.next(), r.globalTid = in.next() & 0xFFFFFFFFFF;
            r.syncType = in.next();
            rows.sync(r);
            break;
        }
        case 6:
            rows.sessionStart(in.next());
            break;
        case 7: {
            NsysGpuRow g;
            g.id = in.next() % 16, g.smCount = in.next(), g.totalMemory = in.next(), g.ccMajor = in.next();
            g.smClockHz = in.next(), g.memoryBandwidth = double(in.next());
            text.assign(reinterpret_cast<const char*>(in.p), in.n < 12 ? in.n : 12);
            g.name = text;
            rows.gpu(g);
            break;
        }
        case 8: {
            static const char* const keys[]
                = { "EXPORT_PRODUCT_NAME", "EXPORT_PRODUCT_VERSION", "EXPORT_SCHEMA_VERSION" };
            text.assign(reinterpret_cast<const char*>(in.p), in.n < 12 ? in.n : 12);
            rows.exportMetadata(keys[uint64_t(in.next()) % 3], text);
            break;
        }
        case 9:
            text.assign(reinterpret_cast<const char*>(in.p), in.n < 12 ? in.n : 12);
            rows.process(in.next(), text);
            break;
        case 10: {
            NsysOsrtRow r;
            r.start = in.next(), r.end = in.next(), r.globalTid = in.next(), r.nameId = in.next() % 64;
            rows.osrt(r);
            break;
        }
        case 11: {
            NsysGraphNodeRow r; // small node ids, so that clones find their originals (and loops)
            r.start = in.next(), r.end = in.next(), r.globalTid = in.next(), r.graphNodeId = in.next() % 16;
            r.originalGraphNodeId = in.next() % 16;
            rows.graphNode(r);
            break;
        }
        default:
            rows.threadName(in.next(), in.next() % 64);
            break;
        }
    }
    rows.finish();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 1)
        return 0;
    std::vector<StagedTrace> staged;
    staged.emplace_back("nsys", "fuzz.sqlite");
    if (data[0] & 1) {
        NsysRowConverter rows(staged[0]);
        feedRows(gapscope::fuzz::FuzzBytes { data + 1, size - 1 }, rows);
    } else {
        const bool ok = gapscope::fuzz::readAsFile(data + 1, size - 1, [&staged](const char* path) {
            NsysReader reader(path, staged[0]);
            return reader.read().isOk();
        });
        if (!ok)
            return 0;
    }
    gapscope::model::Trace trace = TraceAssembler(std::move(staged)).assemble();
    return trace.eventCount() > (1u << 30) ? 1 : 0;
}
