// SPDX-License-Identifier: MIT
#include "model/io/eventfilewriter.h"

#include "model/format/chunkencoder.h"
#include "model/format/tracewriter.h"
#include "model/io/tracemetaproto.h"

namespace gapscope::model {

struct EventFileWriter::Impl {
    pb::FileHeader header;
    std::unique_ptr<format::TraceWriter> writer;
    format::ChunkEncoder* encoder = nullptr;
};

EventFileWriter::EventFileWriter(std::unique_ptr<Impl> impl)
    : m_impl(std::move(impl))
{
}

EventFileWriter::~EventFileWriter() = default;

Expected<std::unique_ptr<EventFileWriter>> EventFileWriter::create(
    const std::string& path, const TraceHeader& header, int zstdLevel)
{
    auto impl = std::make_unique<Impl>();
    impl->header = toProto(header);
    format::WriterOptions wo;
    wo.zstdLevel = zstdLevel;
    auto writer = format::TraceWriter::create(path, impl->header, wo);
    if (!writer)
        return writer.status();
    impl->writer = std::move(*writer);
    impl->encoder = &impl->writer->encoder();
    return std::unique_ptr<EventFileWriter>(new EventFileWriter(std::move(impl)));
}

uint32_t EventFileWriter::string(std::string_view s)
{
    return m_impl->encoder->internString(s);
}

uint32_t EventFileWriter::lane(const LaneInfo& info)
{
    return m_impl->encoder->lane(toProto(info));
}

uint32_t EventFileWriter::launchConfig(const KernelConfig& c)
{
    return m_impl->encoder->config(toProto(c));
}

void EventFileWriter::kernel(uint32_t lane, TimeNs start, TimeNs dur, uint32_t name, uint32_t corr, uint32_t config,
    uint64_t graphId, uint64_t graphNode)
{
    m_impl->encoder->addKernel(lane, start, uint64_t(dur), name, corr, config, graphId, graphNode);
}

void EventFileWriter::api(uint32_t lane, TimeNs start, TimeNs dur, uint32_t name, uint32_t corr)
{
    m_impl->encoder->addApi(lane, start, uint64_t(dur), name, corr);
}

void EventFileWriter::sync(uint32_t lane, TimeNs start, TimeNs dur, SyncKind kind, uint64_t stream, uint32_t corr)
{
    m_impl->encoder->addSync(lane, start, uint64_t(dur), pb::SyncKind(kind), stream, corr);
}

void EventFileWriter::memcpy(uint32_t lane, TimeNs start, TimeNs dur, CopyKind kind, uint64_t bytes, uint32_t corr)
{
    m_impl->encoder->addMemop(lane, start, uint64_t(dur), pb::MEMOP_MEMCPY, pb::CopyKind(kind), bytes, 0, corr);
}

void EventFileWriter::nvtx(uint32_t lane, TimeNs start, TimeNs dur, uint32_t name, uint32_t depth)
{
    m_impl->encoder->addNvtx(lane, start, uint64_t(dur), name, depth);
}

void EventFileWriter::host(uint32_t lane, TimeNs start, TimeNs dur, uint32_t name, HostKind kind, uint32_t depth)
{
    m_impl->encoder->addHost(lane, start, uint64_t(dur), name, depth, pb::HostKind(kind));
}

void EventFileWriter::collective(uint32_t lane, TimeNs start, TimeNs dur, uint32_t op, const CollectiveInfo& c)
{
    const format::ChunkEncoder::Collective fc { c.bytes, c.datatype, c.algorithm, c.protocol, c.sequence, c.comm,
        c.channels, c.root }; // string ids are the file's already
    m_impl->encoder->addCollective(lane, start, uint64_t(dur), op, fc);
}

void EventFileWriter::step(uint32_t rank, const Step& s)
{
    m_impl->encoder->addStep(toRecord(rank, s, s.label.empty() ? 0 : m_impl->encoder->internString(s.label)));
}

Status EventFileWriter::flush()
{
    return m_impl->writer->maybeFlush();
}

Status EventFileWriter::finish()
{
    return m_impl->writer->finish(&m_impl->header);
}

} // namespace gapscope::model
