// SPDX-License-Identifier: MIT
#pragma once

// EventFileWriter: a .gapscope file written event by event in the model's own types (the
// synthetic-trace generator's files): the format's TraceWriter and ChunkEncoder behind it, the
// conversions to the format's messages here in io/, so its users name no protobuf type. Memory stays
// bounded (a CHUNK frame every TraceWriter::eventsPerChunk events, on flush()); finish() writes the
// index, the overview and the footer. Ids returned by string/lane/launchConfig are the file's.
//
// Threading: one thread.

#include "model/trace/trace.h"

#include <memory>
#include <string>
#include <string_view>

namespace gapscope::format {
class TraceWriter;
}

namespace gapscope::model {

class EventFileWriter {
public:
    static Expected<std::unique_ptr<EventFileWriter>> create(
        const std::string& path, const TraceHeader& header, int zstdLevel);
    ~EventFileWriter();
    EventFileWriter(const EventFileWriter&) = delete;
    EventFileWriter& operator=(const EventFileWriter&) = delete;

    uint32_t string(std::string_view s);
    uint32_t lane(const LaneInfo& info);
    uint32_t launchConfig(const KernelConfig& c);
    void kernel(uint32_t lane, TimeNs start, TimeNs dur, uint32_t name, uint32_t corr, uint32_t config,
        uint64_t graphId, uint64_t graphNode);
    void api(uint32_t lane, TimeNs start, TimeNs dur, uint32_t name, uint32_t corr);
    void sync(uint32_t lane, TimeNs start, TimeNs dur, SyncKind kind, uint64_t stream, uint32_t corr);
    void memcpy(uint32_t lane, TimeNs start, TimeNs dur, CopyKind kind, uint64_t bytes, uint32_t corr);
    void nvtx(uint32_t lane, TimeNs start, TimeNs dur, uint32_t name, uint32_t depth);
    void host(uint32_t lane, TimeNs start, TimeNs dur, uint32_t name, HostKind kind, uint32_t depth);
    void collective(uint32_t lane, TimeNs start, TimeNs dur, uint32_t op, const CollectiveInfo& c);
    void step(uint32_t rank, const Step& step);
    // A CHUNK frame when enough events are pending.
    Status flush();
    // The rest, the index (with the header given to create()), the overview and the footer.
    Status finish();

private:
    struct Impl;
    explicit EventFileWriter(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace gapscope::model
