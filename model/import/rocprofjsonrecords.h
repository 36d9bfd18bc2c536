// SPDX-License-Identifier: MIT
#pragma once

// RocprofJsonRecords: parses the records of a rocprofv3 results.json (rocprofiler-sdk's JSON output),
// one at a time as RocprofJsonReader finds them, with simdjson On-Demand in place in the reader's
// window, and hands them to RocprofRowConverter.
//
// What each record gives (fields by name; others ignored):
//   metadata        pid, node.hostname, command (the process's name: its command line)
//   strings         buffer_records[kind].operations: the names of API operations (the array is indexed
//                   by the records' `kind`; the numbers differ between rocprofiler-sdk versions)
//   agents[]        id.handle, type, gpu_index (else logical_node_type_id for a GPU, type 2),
//                   product_name, name (the architecture, "gfx950"), cu_count, max_engine_clk_fcompute
//                   (MHz), mem_banks[0] (size_in_bytes, mem_clk_max, width), domain, location_id
//   kernel_symbols[] kernel_id, kernel_name (the mangled symbol; demangled by the converter)
//   kernel_dispatch[] thread_id, correlation_id.internal, start_timestamp, end_timestamp, stream_id.handle
//                   (absent before rocprofiler-sdk 1.0: lanes per queue then), dispatch_info: agent_id,
//                   queue_id, kernel_id, group_segment_size, workgroup_size, grid_size (x, y, z)
//   hip_api[]       kind, operation, thread_id, correlation_id.internal, start_timestamp, end_timestamp
//   memory_copy[]   operation (the direction, named by strings.buffer_records), thread_id,
//                   correlation_id.internal, start_timestamp, end_timestamp, src_agent_id, dst_agent_id, bytes,
//                   stream_id (where the version writes it)
//   marker_api[]    thread_id, correlation_id.internal, start_timestamp, end_timestamp; the text is
//                   strings.marker_api's value whose key is the correlation id (a range without one is
//                   named by its operation, roctxRangePushA ...; counted, import_missing_strings)
// A record that lacks a required field or holds one of the wrong type is not used: parse() says which
// field. A dispatch whose kernel symbol comes later in the file is named once its process ends; one the
// file never names stays "<kernel N>" and is counted (import_missing_strings).
//
// Threading: one thread. simdjson stays out of this header (Impl).

#include "model/import/rocprofrows.h"

#include <memory>
#include <string>

namespace gapscope::model::importer {

class RocprofJsonRecords {
public:
    enum class Kind { Metadata, Strings, Agent, KernelSymbol, Dispatch, HipApi, MemoryCopy, Marker };

    RocprofJsonRecords(StagedTrace& out, RocprofRowConverter& rows);
    ~RocprofJsonRecords();

    // An element of rocprofiler-sdk-tool (one process) begins or ends; ids of kernels, operations and
    // the pid belong to it.
    void beginProcess();
    void endProcess();
    // Parses one record, the `n` bytes at `data` (with `capacity` bytes from `data` writable, simdjson's
    // padding included). False with `error` naming the field when the record cannot be used.
    bool parse(Kind kind, const char* data, size_t n, size_t capacity, std::string& error);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace gapscope::model::importer
