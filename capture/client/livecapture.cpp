// SPDX-License-Identifier: MIT
#include "capture/client/livecapture.h"

#include "capture/client/encodersink.h"
#include "capture/protocol/netutil.h"
#include "model/format/stats.h"
#include "model/format/trace.pb.h"

#include <algorithm>
#include <cstdio>
#include <poll.h>
#include <set>
#include <thread>

namespace gapscope::capture {

LiveCapture::LiveCapture(LiveCaptureOptions options)
    : m_opt(std::move(options))
{
}

LiveCapture::~LiveCapture() = default;

Status LiveCapture::connect()
{
    m_agents.clear();
    if (m_opt.agents.empty())
        return Status::error("no agent address given");
    for (const auto& addr : m_opt.agents) {
        auto a = std::make_unique<Agent>();
        a->address = addr;
        ClientOptions co;
        co.address = addr;
        co.token = m_opt.token;
        co.clientName = m_opt.clientName;
        co.clientVersion = m_opt.clientVersion;
        co.connectTimeoutMs = m_opt.connectTimeoutMs;
        a->client = std::make_unique<AgentClient>(co);
        if (Status s = a->client->connect(); !s)
            return s;
        a->hello = a->client->hello();
        if (Status s = a->client->syncClock(std::max(1, m_opt.clockExchanges)); !s)
            return s;
        a->offsetNs = a->client->clock().offsetNs();
        a->offsetErrorNs = a->client->clock().errorNs();
        m_agents.push_back(std::move(a));
    }
    for (auto& a : m_agents) {
        // The first agent is the reference clock; a single agent keeps its own times exactly.
        a->shiftNs = -(a->offsetNs - m_agents[0]->offsetNs);
        RemapOptions ro;
        ro.timeShiftNs = a->shiftNs;
        a->remap = std::make_unique<ChunkRemapper>(m_enc, ro);
    }
    return Status::ok();
}

Expected<std::vector<wire::RankList>> LiveCapture::listRanks()
{
    std::vector<wire::RankList> out;
    for (auto& a : m_agents) {
        auto r = a->client->listRanks();
        if (!r)
            return r.status();
        out.push_back(std::move(*r));
    }
    return out;
}

Status LiveCapture::start()
{
    uint64_t req = 1;
    for (auto& a : m_agents) {
        wire::ClientToAgent m;
        auto* sc = m.mutable_start_capture();
        sc->set_request_id(req++);
        *sc->mutable_settings() = m_opt.settings;
        sc->set_stream(m_opt.stream);
        sc->set_output_path(m_opt.agentOutputName);
        sc->set_arm_timeout_s(m_opt.armTimeoutS);
        sc->set_wait_for_ranks(m_opt.waitForRanks);
        if (Status s = a->client->send(m); !s)
            return s;
    }
    return Status::ok();
}

void LiveCapture::mergeChunk(size_t i, const pb::Chunk& c, Listener& l)
{
    Agent& a = *m_agents[i];
    ++a.chunks;
    a.events += ChunkRemapper::eventCount(c);
    if (m_agents.size() == 1) {
        l.chunk(c); // one stream: already global, already in the reference clock
        return;
    }
    EncoderSink sink(m_enc);
    if (Status s = a.remap->apply(c, sink); !s) {
        l.error(i, "stream from " + a.address + ": " + s.message());
        return;
    }
    m_enc.flush(m_out);
    l.chunk(m_out);
}

void LiveCapture::handle(size_t i, wire::AgentToClient& m, Listener& l)
{
    Agent& a = *m_agents[i];
    switch (m.msg_case()) {
    case wire::AgentToClient::kStarted:
        if (m.started().request_id() != 0 || !a.captureId) {
            a.captureId = m.started().capture_id();
            a.started = m.started();
            l.started(i, m.started());
        }
        return;
    case wire::AgentToClient::kChunk:
        if (m.chunk().capture_id() == a.captureId)
            mergeChunk(i, m.chunk().chunk(), l);
        return;
    case wire::AgentToClient::kProgress:
        l.progress(i, m.progress());
        return;
    case wire::AgentToClient::kCut:
        a.cut = true;
        l.streamCut(i, m.cut());
        return;
    case wire::AgentToClient::kDone:
        if (m.done().capture_id() == a.captureId) {
            a.done = true;
            a.doneMsg = m.done();
            l.done(i, m.done());
        }
        return;
    case wire::AgentToClient::kError:
        l.error(i, a.address + ": " + m.error().message());
        if (m.error().fatal() || !a.captureId) {
            a.failed = true; // StartCapture refused (busy, no ranks...) or the connection is closing
        }
        return;
    case wire::AgentToClient::kGoodbye:
        l.error(i, a.address + ": agent said goodbye: " + m.goodbye().reason());
        return;
    default:
        return;
    }
}

bool LiveCapture::reconnect(size_t i, Listener& l)
{
    Agent& a = *m_agents[i];
    const int64_t deadline = monotonicNs() + int64_t(m_opt.reconnectS * 1e9);
    while (monotonicNs() < deadline) {
        if (a.client->connect()) {
            const bool same = a.client->hello().agent().instance_id() == a.hello.agent().instance_id();
            l.reconnected(i, same);
            if (!same) {
                l.error(i,
                    a.address + ": the agent restarted; capture " + std::to_string(a.captureId)
                        + " is lost (what it wrote so far stays in " + a.started.output_path() + ")");
                a.failed = true;
                return true;
            }
            // Follow the same capture again: a dictionary snapshot comes first, so a fresh remapper.
            RemapOptions ro;
            ro.timeShiftNs = a.shiftNs;
            a.remap = std::make_unique<ChunkRemapper>(m_enc, ro);
            wire::ClientToAgent m;
            m.mutable_attach()->set_capture_id(a.captureId);
            if (a.client->send(m))
                return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
}

Status LiveCapture::run(Listener& l, const std::atomic<bool>* stop)
{
    for (;;) {
        bool allDone = true;
        for (const auto& a : m_agents)
            allDone = allDone && (a->done || a->failed);
        if (allDone)
            break;
        if (stop && stop->load() && !m_stopSent) {
            m_stopSent = true;
            for (auto& a : m_agents)
                if (!a->done && !a->failed && a->captureId) {
                    wire::ClientToAgent m;
                    m.mutable_stop()->set_capture_id(a->captureId);
                    (void)a->client->send(m);
                }
        }
        std::vector<pollfd> fds;
        for (auto& a : m_agents)
            fds.push_back({ (a->done || a->failed || !a->client->connected()) ? -1 : a->client->fd(), POLLIN, 0 });
        ::poll(fds.data(), fds.size(), 100);
        for (size_t i = 0; i < m_agents.size(); ++i) {
            Agent& a = *m_agents[i];
            if (a.done || a.failed)
                continue;
            for (;;) {
                wire::AgentToClient m;
                auto got = a.client->receive(m, 0);
                if (!got) {
                    l.error(i, a.address + ": " + got.error());
                    if (!reconnect(i, l)) {
                        a.failed = true;
                        l.error(i,
                            a.address + ": could not reconnect within " + std::to_string(int(m_opt.reconnectS)) + " s");
                    }
                    break;
                }
                if (!*got)
                    break;
                handle(i, m, l);
            }
        }
    }
    for (const auto& a : m_agents)
        if (a->failed && !a->done)
            return Status::error(a->address + ": capture did not complete");
    return Status::ok();
}

pb::FileHeader LiveCapture::mergedHeader(bool final) const
{
    pb::FileHeader h;
    std::set<std::string> gpus;
    for (size_t i = 0; i < m_agents.size(); ++i) {
        const Agent& a = *m_agents[i];
        const pb::FileHeader& src = (final && a.done) ? a.doneMsg.header() : a.started.header();
        if (i == 0) {
            h = src;
            h.clear_hosts();
            h.clear_gpus();
            h.clear_ranks();
            h.clear_counters();
        }
        for (auto host : src.hosts()) {
            if (m_agents.size() > 1) {
                host.set_clock_offset_ns(a.shiftNs);
                host.set_clock_offset_method(i == 0 ? "reference" : "ntp-ping");
                host.set_clock_offset_error_ns(i == 0 ? 0 : a.offsetErrorNs + m_agents[0]->offsetErrorNs);
            }
            *h.add_hosts() = host;
        }
        for (const auto& g : src.gpus())
            if (gpus.insert(g.host() + "/" + g.uuid()).second)
                *h.add_gpus() = g;
        for (const auto& r : src.ranks())
            *h.add_ranks() = r;
        for (const auto& c : src.counters())
            *h.add_counters() = c;
        if (a.cut) {
            *h.add_counters() = format::makeCounter(format::Stat::ClientStreamCut, -1, 1,
                "the live stream from " + a.address + " was cut (client too slow); its file on the agent is complete");
        }
        (*h.mutable_metadata())["agent" + std::to_string(i)] = a.address + " " + a.started.output_path();
    }
    if (m_agents.size() > 1)
        h.set_source("gapscope-cli capture (" + std::to_string(m_agents.size()) + " agents)");
    return h;
}

Status LiveCapture::fetchFile(size_t i, const std::string& path, int timeoutMs)
{
    Agent& a = *m_agents.at(i);
    wire::ClientToAgent req;
    req.mutable_fetch()->set_capture_id(a.captureId);
    if (Status s = a.client->send(req); !s)
        return s;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f)
        return Status::error(path + ": cannot create");
    const int64_t deadline = monotonicNs() + int64_t(timeoutMs) * 1000000;
    Status result = Status::error(path + ": download from " + a.address + " timed out");
    while (monotonicNs() < deadline) {
        wire::AgentToClient m;
        auto got = a.client->receive(m, 1000);
        if (!got) {
            result = got.status();
            break;
        }
        if (!*got)
            continue;
        if (m.has_error()) {
            result = Status::error(a.address + ": " + m.error().message());
            break;
        }
        if (!m.has_file() || m.file().capture_id() != a.captureId)
            continue;
        const auto& d = m.file();
        if (std::fwrite(d.data().data(), 1, d.data().size(), f) != d.data().size()) {
            result = Status::error(path + ": write failed");
            break;
        }
        if (d.eof()) {
            result = Status::ok();
            break;
        }
    }
    if (std::fclose(f) != 0 && result)
        result = Status::error(path + ": write failed");
    return result;
}

} // namespace gapscope::capture
