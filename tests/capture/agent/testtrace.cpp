// SPDX-License-Identifier: MIT
#include "testtrace.h"

#include "model/format/tracereader.h"
#include "model/format/tracewriter.h"

#include "capture/protocol/framing.h"

#include <chrono>
#include <fstream>
#include <tuple>

namespace gapscope::capture::test {

bool PlainEvent::operator<(const PlainEvent& o) const
{
    return std::tie(lane, start, name, dur) < std::tie(o.lane, o.start, o.name, o.dur);
}

bool PlainEvent::operator==(const PlainEvent& o) const
{
    return std::tie(lane, start, name, dur, rank) == std::tie(o.lane, o.start, o.name, o.dur, o.rank);
}

Status writeTestTrace(const std::string& path, int ranks, int steps, int kernels, int64_t stepNs, int64_t t0)
{
    pb::FileHeader h;
    h.set_source("test");
    h.set_clock_domain("CLOCK_REALTIME");
    for (int r = 0; r < ranks; ++r) {
        auto* ri = h.add_ranks();
        ri->set_rank(uint32_t(r));
        ri->set_world_size(uint32_t(ranks));
        ri->set_host("testhost");
        ri->set_gpu_uuid("GPU-test-" + std::to_string(r));
        auto* g = h.add_gpus();
        g->set_uuid(ri->gpu_uuid());
        g->set_name("test GPU");
    }
    format::WriterOptions wo;
    wo.eventsPerChunk = 4096;
    auto w = format::TraceWriter::create(path, h, wo);
    if (!w)
        return w.status();
    auto& enc = (*w)->encoder();
    for (int s = 0; s < steps; ++s)
        for (int r = 0; r < ranks; ++r) {
            pb::LaneDef l;
            l.set_kind(pb::LANE_GPU_STREAM);
            l.set_rank(uint32_t(r));
            l.set_host("testhost");
            l.set_stream(7);
            l.set_name("stream 7");
            const uint32_t lane = enc.lane(l);
            const int64_t start = t0 + s * stepNs + r * 1000;
            for (int k = 0; k < kernels; ++k)
                enc.addKernel(lane, start + k * (stepNs / kernels), uint64_t(stepNs / kernels / 2),
                    enc.internString("kernel_" + std::to_string(k % 37)), uint32_t(s * kernels + k + 1), 0);
            // The first step a prefill of 64 tokens, the others decodes of one: kinds travel with steps.
            format::StepRecord st;
            st.rank = uint32_t(r);
            st.index = uint32_t(s);
            st.start = start;
            st.duration = uint64_t(stepNs - 2000);
            st.source = pb::STEP_FILE;
            st.kind = s == 0 ? pb::StepBlock::KIND_PREFILL : pb::StepBlock::KIND_DECODE;
            st.batch = 1;
            st.tokens = s == 0 ? 64 : 1;
            enc.addStep(st);
            if (Status st = (*w)->maybeFlush(); !st)
                return st;
        }
    return (*w)->finish();
}

namespace {
struct Collect : format::ChunkDecoder::Visitor {
    const format::ChunkDecoder* dec;
    Decoded* out;
    std::string key(uint32_t lane) const
    {
        const auto* l = dec->laneDef(lane);
        return l ? l->host() + "/" + std::to_string(l->rank()) + "/" + std::to_string(int(l->kind())) + "/"
                + std::to_string(l->stream())
                 : "?";
    }
    void add(uint32_t lane, int64_t start, uint64_t dur, uint32_t name)
    {
        const auto* l = dec->laneDef(lane);
        out->events.push_back({ key(lane), dec->string(name), l ? l->rank() : 0, start, dur });
    }
    void kernel(
        uint32_t lane, int64_t start, uint64_t dur, uint32_t name, uint32_t, uint32_t, uint64_t, uint64_t) override
    {
        add(lane, start, dur, name);
    }
    void nvtx(uint32_t lane, int64_t start, uint64_t dur, uint32_t name, uint32_t, uint32_t) override
    {
        add(lane, start, dur, name);
    }
    void stepRecord(const format::StepRecord& s) override
    {
        out->steps.push_back({ s.rank, s.index, s.start, s.duration, s.kind, s.tokens });
    }
};
} // namespace

Status StreamDecoder::add(const pb::Chunk& c, Decoded& out)
{
    if (Status s = m_dec.absorb(c); !s)
        return s;
    if (Status s = m_dec.validate(c); !s)
        return s;
    Collect col;
    col.dec = &m_dec;
    col.out = &out;
    m_dec.forEach(c, col);
    ++out.chunks;
    return Status::ok();
}

Decoded decodeFile(const std::string& path)
{
    Decoded d;
    auto r = format::TraceReader::open(path);
    if (!r) {
        d.error = r.error();
        return d;
    }
    d.warnings = (*r)->warnings();
    format::ZstdDecompressor z;
    std::string scratch;
    StreamDecoder sd;
    for (const auto& f : (*r)->frames()) {
        if (f.header.type == uint8_t(format::FrameType::Header) && !d.header.has_capture())
            (void)(*r)->readMessage(f, z, scratch, d.header);
        if (f.header.type != uint8_t(format::FrameType::Chunk))
            continue;
        pb::Chunk c;
        if (Status s = (*r)->readMessage(f, z, scratch, c); !s) {
            d.error = s.message();
            continue;
        }
        if (Status s = sd.add(c, d); !s)
            d.error = s.message();
    }
    if ((*r)->hasIndex() && (*r)->index().has_header())
        d.header = (*r)->index().header();
    return d;
}

AgentThread::AgentThread(AgentOptions o)
    : m_server(std::make_unique<AgentServer>(std::move(o)))
{
}

AgentThread::~AgentThread()
{
    stop();
}

Status AgentThread::start()
{
    if (Status s = m_server->start(); !s)
        return s;
    m_thread = std::thread([this] { m_server->run(); });
    return Status::ok();
}

void AgentThread::stop()
{
    if (m_thread.joinable()) {
        m_server->stop();
        m_thread.join();
    }
}

RankThread::RankThread(FakeRankOptions o)
    : m_rank(std::make_unique<FakeRank>(std::move(o)))
{
    m_thread = std::thread([this] { m_rank->run(); });
}

RankThread::~RankThread()
{
    stop();
}

void RankThread::stop()
{
    if (m_thread.joinable()) {
        m_rank->stop();
        m_thread.join();
    }
}

bool readUntilClosed(int fd, int timeoutMs, std::string& got)
{
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    char buf[4096];
    while (std::chrono::steady_clock::now() < end) {
        long n = 0;
        if (!readSome(fd, buf, sizeof buf, 20, n))
            return true; // reset
        if (n == 0)
            return true;
        if (n > 0)
            got.append(buf, size_t(n));
    }
    return false;
}

std::string firstErrorMessage(const std::string& bytes)
{
    for (size_t pos = 0; pos + kFrameHeaderBytes <= bytes.size();) {
        const uint32_t len = getU32LE(bytes.data() + pos);
        if (pos + kFrameHeaderBytes + len > bytes.size())
            break;
        wire::AgentToClient m;
        if (m.ParseFromArray(bytes.data() + pos + kFrameHeaderBytes, int(len)) && m.has_error())
            return m.error().message();
        pos += kFrameHeaderBytes + len;
    }
    return {};
}

std::string registerFrame()
{
    wire::RankToAgent m;
    m.mutable_register_rank()->set_protocol_version(kProtocolVersion);
    m.mutable_register_rank()->set_rank(-1);
    m.mutable_register_rank()->set_process_name("raw-test-connection");
    std::string out;
    (void)appendFrame(m, out, kMaxRankRegisterFrameBytes);
    return out;
}

uint64_t procStatusKb(long pid, const char* field)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    const std::string key = std::string(field) + ":";
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(key, 0) == 0)
            return std::stoull(line.substr(key.size()));
    return 0;
}

} // namespace gapscope::capture::test
