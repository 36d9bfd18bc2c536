// SPDX-License-Identifier: MIT
#pragma once

// NsysReader: reads an Nsight Systems SQLite export (`nsys export --type sqlite`) into a StagedTrace
// through NsysRowConverter; an nvprof file (also SQLite, told apart by its StringTable) is handed to
// NvprofReader.
//
// Tables read (each optional; tables are created lazily by nsys): META_DATA_EXPORT (EXPORT_META_DATA
// before 2023: the tool and schema version), StringIds, PROCESSES, ThreadNames, TARGET_INFO_GPU,
// TARGET_INFO_CUDA_GPU (older exports keep the GPU details there), TARGET_INFO_SESSION_START_TIME,
// CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET, _RUNTIME, _SYNCHRONIZATION and, last (only processes
// with GPU work keep theirs), NVTX_EVENTS, OSRT_API (OS runtime calls: host ranges), CPU samples and
// CUDA_GRAPH_NODE_EVENTS (graph nodes with their capture-time NVTX ranges, NsysGraphNodes). Columns are looked up by
// name, so exports of other nsys versions with added or missing columns still read (graphId exists from 2025.5 on; a
// missing column reads as NULL, 0 for numbers). Units as nsys writes them: TARGET_INFO_GPU.clockRate in Hz,
// memoryBandwidth in bytes/s, totalMemory in bytes; TARGET_INFO_CUDA_GPU.coreClockRate in kHz,
// globalMemoryBandwidth in kB/s.
// Errors: a database that is not an nsys export (no nsys table at all) names what is missing; an
// export without any CUDA activity (or whose CUDA calls ran no GPU work) says which tables are missing or empty.
//
// Threading: one reader per thread.

#include "model/base/status.h"
#include "model/import/nsysrows.h"
#include "model/import/sqlitedb.h"
#include "model/import/stagedtrace.h"

#include <string>

namespace gapscope::model::importer {

class NsysReader {
public:
    NsysReader(std::string path, StagedTrace& out);

    Status read();
    // "nvprof" for an nvprof file, else "nsys".
    static std::string sourceOf(const std::string& path);

private:
    Status readNsys();
    Status readMetadata();
    Status readStrings();
    Status readProcesses();
    Status readGpus();
    Status readKernels();
    Status readMemops(bool memset);
    Status readRuntime();
    Status readSync();
    Status readNvtx();
    Status readOsrt();
    Status readSamples();
    Status readGraphNodes();
    Status nothingImported() const;

    std::string m_path;
    StagedTrace& m_out;
    NsysRowConverter m_rows;
    SqliteDb m_db;
};

} // namespace gapscope::model::importer
