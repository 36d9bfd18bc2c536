// SPDX-License-Identifier: MIT
#include "model/io/tracefile.h"

#include "model/format/chunkdecoder.h"
#include "model/format/tracereader.h"
#include "model/format/tracewriter.h"
#include "model/io/traceloader.h"
#include "model/io/tracemetaproto.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#ifndef GAPSCOPE_VERSION
#define GAPSCOPE_VERSION "0"
#endif

namespace gapscope::model {
namespace {

Expected<Trace> load(Expected<std::unique_ptr<format::TraceReader>> reader, const ReadOptions& options)
{
    if (!reader)
        return reader.status();
    TraceLoader loader(**reader, options);
    return loader.load();
}

// Writes the events of one trace through a TraceWriter, mapping trace ids to the encoder's.
class EventWriter {
public:
    EventWriter(const Trace& trace, format::TraceWriter& writer)
        : m_trace(trace)
        , m_writer(writer)
        , m_enc(writer.encoder())
        , m_strings(trace.stringCount(), UINT32_MAX)
        , m_configs(trace.kernelConfigs().size(), UINT32_MAX)
    {
    }

    uint32_t str(StringId id)
    {
        if (id == 0 || id >= m_strings.size())
            return 0;
        if (m_strings[id] == UINT32_MAX)
            m_strings[id] = m_enc.internString(m_trace.str(id));
        return m_strings[id];
    }

    uint32_t config(const KernelConfig& c)
    {
        size_t idx = size_t(&c - m_trace.kernelConfigs().data());
        if (m_configs[idx] == UINT32_MAX)
            m_configs[idx] = m_enc.config(toProto(c));
        return m_configs[idx];
    }

    Status lane(const Lane& lane)
    {
        const uint32_t l = m_enc.lane(toProto(lane.info));
        const LaneEvents& ev = lane.events;
        for (size_t i = 0; i < ev.size(); ++i) {
            event(lane.id, l, ev, i);
            if ((i & 1023) == 1023)
                if (Status s = m_writer.maybeFlush(); !s)
                    return s;
        }
        return m_writer.maybeFlush();
    }

private:
    void event(LaneId id, uint32_t l, const LaneEvents& ev, size_t i)
    {
        const TimeNs s = ev.start(i);
        const uint64_t d = uint64_t(ev.duration(i));
        switch (m_trace.kindOf(id, i)) {
        case EventKind::Kernel: {
            const KernelConfig* c = m_trace.kernelConfig(id, i);
            m_enc.addKernel(l, s, d, str(ev.name(i)), ev.correlation(i), c ? config(*c) : 0, c ? c->graphId : 0,
                c ? c->graphNodeId : 0);
            break;
        }
        case EventKind::Memcpy:
        case EventKind::Memset: {
            const MemopInfo* m = m_trace.memop(id, i);
            m_enc.addMemop(l, s, d, pb::MemopKind(m->kind), pb::CopyKind(m->copyKind), m->bytes, m->async ? 1 : 0, ev.correlation(i));
            break;
        }
        case EventKind::Api:
            m_enc.addApi(l, s, d, str(ev.name(i)), ev.correlation(i),
                m_trace.apiKind(id, i) == ApiKind::Driver ? pb::API_DRIVER : pb::API_RUNTIME);
            break;
        case EventKind::Sync: {
            const SyncInfo* y = m_trace.sync(id, i);
            m_enc.addSync(l, s, d, pb::SyncKind(y->kind), y->stream, ev.correlation(i));
            break;
        }
        case EventKind::Nvtx:
            m_enc.addNvtx(l, s, d, str(ev.name(i)), m_trace.nvtxDepth(id, i));
            break;
        case EventKind::Host:
            m_enc.addHost(l, s, d, str(ev.name(i)), m_trace.hostDepth(id, i), pb::HostKind(m_trace.hostKind(id, i)));
            break;
        case EventKind::Collective: {
            const CollectiveInfo* c = m_trace.collective(id, i);
            format::ChunkEncoder::Collective fc { c->bytes, str(c->datatype), str(c->algorithm), str(c->protocol),
                c->sequence, c->comm, c->channels, c->root };
            m_enc.addCollective(l, s, d, str(ev.name(i)), fc);
            break;
        }
        }
    }

    const Trace& m_trace;
    format::TraceWriter& m_writer;
    format::ChunkEncoder& m_enc;
    std::vector<uint32_t> m_strings;
    std::vector<uint32_t> m_configs;
};

} // namespace

Expected<Trace> readTraceFile(const std::string& path, const ReadOptions& options)
{
    return load(format::TraceReader::open(path, options.error), options);
}

Expected<Trace> readTrace(const format::TraceReader& reader, const ReadOptions& options)
{
    TraceLoader loader(reader, options);
    return loader.load();
}

Expected<Trace> readTraceBuffer(std::string bytes, const std::string& name, const ReadOptions& options)
{
    return load(format::TraceReader::fromBuffer(std::move(bytes), name, options.error), options);
}

Status writeTraceFile(const Trace& trace, const std::string& path, const WriteOptions& options)
{
    TraceHeader meta = trace.header();
    if (meta.toolVersion.empty())
        meta.toolVersion = GAPSCOPE_VERSION;
    meta.startNs = trace.startTime();
    meta.endNs = trace.endTime();
    meta.warnings = trace.warnings(); // the trace's warnings include those its source file recorded
    pb::FileHeader header = toProto(meta);
    format::WriterOptions wo;
    wo.zstdLevel = options.zstdLevel;
    wo.eventsPerChunk = options.eventsPerChunk;
    auto writer = format::TraceWriter::create(path, header, wo);
    if (!writer)
        return writer.status();
    format::TraceWriter& w = **writer;
    if (!trace.annotations().empty())
        if (Status s = w.writeSection(format::FrameType::Annotations, toProto(trace.annotations())); !s)
            return s;
    if (trace.budgetSettings())
        if (Status s = w.writeSection(format::FrameType::Budget, toProto(*trace.budgetSettings())); !s)
            return s;
    if (trace.classifierTable())
        if (Status s = w.writeSection(format::FrameType::Classifier, toProto(*trace.classifierTable())); !s)
            return s;
    EventWriter events(trace, w);
    for (const Lane& lane : trace.lanes())
        if (!(options.skipLane && options.skipLane(lane.info)))
            if (Status s = events.lane(lane); !s)
                return s;
    for (uint32_t rank : trace.ranks())
        for (const Step& st : trace.steps(rank))
            w.encoder().addStep(toRecord(rank, st, st.label.empty() ? 0 : w.encoder().internString(st.label)));
    for (const GraphNodeInfo& n : trace.graphNodes())
        w.encoder().addGraphNode(toProto(n, trace));
    return w.finish(&header);
}

} // namespace gapscope::model
