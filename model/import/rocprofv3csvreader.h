// SPDX-License-Identifier: MIT
#pragma once

// Rocprofv3CsvReader: rocprofiler-sdk's CSV output (`rocprofv3 --kernel-trace --hip-trace
// --memory-copy-trace --marker-trace --output-format csv`) into a StagedTrace, the source "rocprofv3".
//
// rocprofv3 writes one file per record kind for each process: PREFIX_kernel_trace.csv,
// PREFIX_hip_api_trace.csv, PREFIX_memory_copy_trace.csv, PREFIX_marker_api_trace.csv and
// PREFIX_agent_info.csv (PREFIX is the pid by default, `-o NAME` sets it). Opening any of them reads the
// whole set found beside it: the agents first, then HIP API calls, ROCTx markers, kernels and memory
// copies (a file named as one kind that holds another is read as its header says). Columns are found
// by their header names, so the versions that add columns (Stream_Id,
// LDS_Block_Size, ...) or write an agent as "Agent 4" instead of 4 read the same. Kernel and copy files
// name no process: their pid is PREFIX when it is a number, else the first Process_Id of the set's API
// or marker rows (read before them), else 0. Agents are named by node id (Agent_Id, Source_Agent_Id,
// Destination_Agent_Id); agent_info maps a GPU's node id to its ordinal (Logical_Node_Type_Id where written, else the
// order of the GPU rows by node id); without agent_info the node id is the device, as written. The rows go through
// RocprofRowConverter (the mapping of rocprofv3 JSON).
//
// Errors: a malformed line, a row whose field count differs from its header's, or a number that does
// not parse is skipped with file, line and column in a warning (the first ten of the set) and counted
// (import_bad_events); the rows around it are kept. A file cut inside a row keeps the rows before it
// (import_truncated). A file of the set that cannot be opened is a warning. A set with no GPU work
// (no kernel dispatch, no memory copy) fails, saying what it found.
//
// Threading: one reader per thread.

#include "model/import/bytesource.h"
#include "model/import/stagedtrace.h"

#include <string>
#include <vector>

namespace gapscope::model::importer {

class RocprofRowConverter;

class Rocprofv3CsvReader {
public:
    enum class File { KernelTrace, HipApiTrace, MemoryCopyTrace, MarkerApiTrace, AgentInfo };

    // `source`: any file of the set (the one sniffed); the others are opened by name beside it.
    Rocprofv3CsvReader(ByteSource& source, StagedTrace& out);
    Status read();

    // The file kind a CSV header line names, or false: a kernel trace (Kind, Kernel_Name,
    // Start_Timestamp), HIP API or marker rows (Domain, Function, Process_Id), memory copies (Kind,
    // Direction, Source_Agent_Id), agent_info (Node_Id, Agent_Type).
    static bool looksLikeRocprofv3Csv(const char* head, size_t n);
    // The files of the set `path` belongs to that exist, in reading order (path itself when it names
    // no set member by its suffix).
    static std::vector<std::string> setOf(const std::string& path);

private:
    struct Columns;
    Status readFile(const std::string& path, File kind, RocprofRowConverter& rows);
    bool row(File kind, const Columns& c, const std::vector<std::string>& fields, RocprofRowConverter& rows,
        std::string& bad);
    void skipped(const std::string& path, uint64_t line, uint32_t column, const std::string& why);

    ByteSource& m_source;
    std::string m_path;
    StagedTrace& m_out;
    int64_t m_pid = 0;
    bool m_pidKnown = false;
    uint64_t m_badRows = 0;
    std::vector<std::pair<int64_t, int64_t>> m_gpuAgents; // (node id, logical GPU ordinal or -1)
};

} // namespace gapscope::model::importer
