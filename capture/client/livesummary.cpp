// SPDX-License-Identifier: MIT
#include "capture/client/livesummary.h"

#include "capture/client/agentclient.h"
#include "model/format/stats.h"

namespace gapscope::capture {

namespace {

AgentSummary fromHello(const std::string& address, const wire::HelloReply& hello)
{
    AgentSummary a;
    const auto& id = hello.agent();
    a.address = address;
    a.host = id.host();
    a.version = id.agent_version();
    a.instanceId = id.instance_id();
    a.replay = id.replay();
    a.replayFile = id.replay_file();
    return a;
}

void addRanks(AgentSummary& a, const wire::RankList& list)
{
    for (const auto& r : list.ranks()) {
        RankSummary s;
        s.rank = int(r.info().rank());
        s.host = r.info().host().empty() ? r.gpu().host() : r.info().host();
        s.gpuName = r.gpu().name();
        s.gpuUuid = r.gpu().uuid().empty() ? r.info().gpu_uuid() : r.gpu().uuid();
        s.pid = r.info().pid();
        s.state = r.state();
        a.ranks.push_back(std::move(s));
    }
}

} // namespace

std::vector<AgentSummary> connectedAgents(LiveCapture& capture)
{
    std::vector<AgentSummary> out;
    auto lists = capture.listRanks();
    for (size_t i = 0; i < capture.agents().size(); ++i) {
        const LiveCapture::Agent& a = *capture.agents()[i];
        AgentSummary s = fromHello(a.address, a.client->connected() ? a.client->hello() : a.hello);
        s.offsetNs = a.offsetNs;
        s.offsetErrorNs = a.offsetErrorNs;
        s.shiftNs = a.shiftNs;
        s.captureId = a.captureId;
        if (lists && i < lists->size())
            addRanks(s, (*lists)[i]);
        out.push_back(std::move(s));
    }
    return out;
}

std::optional<std::vector<AgentSummary>> probeAgents(const LiveCaptureOptions& options, int connectTimeoutMs)
{
    std::vector<AgentSummary> out;
    for (const auto& address : options.agents) {
        ClientOptions co;
        co.address = address;
        co.token = options.token;
        co.clientName = options.clientName;
        co.connectTimeoutMs = connectTimeoutMs;
        AgentClient c(co);
        if (!c.connect())
            return std::nullopt;
        AgentSummary s = fromHello(address, c.hello());
        if (auto r = c.listRanks(2000))
            addRanks(s, *r);
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<AgentListing> listAgents(const std::vector<std::string>& addresses, const std::string& token,
    const std::string& clientName, int connectTimeoutMs, int listTimeoutMs)
{
    std::vector<AgentListing> out;
    for (const auto& address : addresses) {
        AgentListing l;
        l.address = address;
        ClientOptions co;
        co.address = address;
        co.token = token;
        co.clientName = clientName;
        co.connectTimeoutMs = connectTimeoutMs;
        AgentClient c(co);
        if (Status s = c.connect(); !s) {
            l.error = s.message();
        } else {
            l.agent = fromHello(address, c.hello());
            if (auto r = c.listRanks(listTimeoutMs))
                addRanks(l.agent, *r);
            else
                l.error = r.error();
        }
        out.push_back(std::move(l));
    }
    return out;
}

CaptureChoice captureChoiceOf(const LiveCaptureOptions& options)
{
    const pb::CaptureSettings& s = options.settings;
    CaptureChoice c;
    c.steps = s.steps();
    c.stepRule = s.step_rule();
    c.stepPattern = s.step_pattern();
    c.kernels = s.kernels();
    c.memoryOps = s.memory_ops();
    c.runtimeApi = s.runtime_api();
    c.synchronization = s.synchronization();
    c.nvtx = s.nvtx();
    c.nccl = s.nccl();
    return c;
}

void setCaptureChoice(LiveCaptureOptions& options, const CaptureChoice& c)
{
    pb::CaptureSettings& s = options.settings;
    s.set_steps(c.steps);
    s.set_step_rule(c.stepRule);
    s.set_step_pattern(c.stepPattern);
    s.set_kernels(c.kernels);
    s.set_memory_ops(c.memoryOps);
    s.set_runtime_api(c.runtimeApi);
    s.set_synchronization(c.synchronization);
    s.set_nvtx(c.nvtx);
    s.set_nccl(c.nccl);
}

LiveEventAdapter::LiveEventAdapter(
    LiveCapture& capture, LiveEvents& events, std::function<void(const pb::Chunk&)> chunks)
    : m_capture(capture)
    , m_events(events)
    , m_chunks(std::move(chunks))
{
}

void LiveEventAdapter::started(size_t agent, const wire::CaptureStarted& m)
{
    m_events.started(agent, m.capture_id(), m.output_path());
}

void LiveEventAdapter::chunk(const pb::Chunk& merged)
{
    m_chunks(merged);
}

void LiveEventAdapter::progress(size_t agent, const wire::Progress& m)
{
    uint64_t dropped = 0;
    for (const auto& r : m.ranks())
        dropped += r.dropped_events();
    for (const auto& c : m.counters())
        if (format::severityOf(c) == format::Severity::DataLoss
            && c.name() != format::statInfo(format::Stat::AgentDroppedEvents).name) // counted just above
            dropped += c.value();
    m_events.progress(agent, m.phase(), m.steps_done(), m.steps_total(), m.events(), dropped);
}

void LiveEventAdapter::streamCut(size_t agent, const wire::StreamCut& m)
{
    m_events.streamCut(agent, m.reason(), m.output_path());
}

void LiveEventAdapter::done(size_t agent, const wire::CaptureDone& m)
{
    m_events.done(agent, m.ok(), m.error(), m.events(), m.output_path());
}

void LiveEventAdapter::error(size_t agent, const std::string& message)
{
    m_events.error(agent, message);
}

void LiveEventAdapter::reconnected(size_t agent, bool sameInstance)
{
    m_events.reconnected(agent, sameInstance, m_capture.agents()[agent]->client->hello().agent().instance_id());
}

} // namespace gapscope::capture
