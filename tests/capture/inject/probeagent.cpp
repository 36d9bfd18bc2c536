// SPDX-License-Identifier: MIT
#include "probeagent.h"

#include "capture/protocol/framing.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <type_traits>
#include <unistd.h>

namespace gapscope::capture::probe {

namespace {

struct Collect : format::ChunkDecoder::Visitor {
    ProbeAgent::Rank& r;
    const format::ChunkDecoder& d;
    Collect(ProbeAgent::Rank& rank, const format::ChunkDecoder& dec)
        : r(rank)
        , d(dec)
    {
    }
    void kernel(uint32_t, int64_t start, uint64_t dur, uint32_t name, uint32_t, uint32_t, uint64_t, uint64_t) override
    {
        r.kernels.emplace_back(start, dur);
        const std::string& n = d.string(name);
        if (n.find("nccl") == std::string::npos) // collective kernels also hold the wait for peers
            r.computeKernels.emplace_back(start, dur);
        if (r.kernelNames.size() < 512 || r.kernelNames.count(n))
            ++r.kernelNames[n];
    }
    void memop(uint32_t, int64_t, uint64_t, pb::MemopKind, pb::CopyKind, uint64_t, uint32_t, uint32_t) override
    {
        ++r.memops;
    }
    void api(uint32_t, int64_t, uint64_t, uint32_t, uint32_t, pb::ApiKind) override { ++r.apis; }
    void sync(uint32_t, int64_t, uint64_t, pb::SyncKind, uint64_t, uint32_t) override { ++r.syncs; }
    void nvtx(uint32_t, int64_t, uint64_t, uint32_t, uint32_t, uint32_t) override { ++r.nvtx; }
    void collective(uint32_t, int64_t start, uint64_t dur, uint32_t op, uint64_t bytes, uint32_t datatype,
        uint32_t algorithm, uint32_t protocol, uint64_t sequence, uint64_t, uint32_t channels, uint32_t) override
    {
        ++r.collectives;
        ++r.collectiveOps[d.string(op)];
        if (r.collectiveSamples.size() < 4)
            r.collectiveSamples.push_back(d.string(op) + " bytes=" + std::to_string(bytes)
                + " dtype=" + d.string(datatype) + " algo=" + d.string(algorithm) + " proto=" + d.string(protocol)
                + " seq=" + std::to_string(sequence) + " channels=" + std::to_string(channels)
                + " host_us=" + std::to_string(dur / 1000) + " start=" + std::to_string(start));
    }
    void step(uint32_t, uint32_t index, int64_t start, uint64_t dur, pb::StepSource) override
    {
        auto& s = r.steps[index];
        s.start = start;
        s.duration = dur;
    }
};

} // namespace

Status ProbeAgent::listen(const std::string& socketPath)
{
    auto fd = listenUnix(socketPath);
    if (!fd)
        return fd.status();
    m_listen = std::move(*fd);
    (void)setNonBlocking(m_listen.get(), true);
    m_path = socketPath;
    return Status::ok();
}

size_t ProbeAgent::rankCount() const
{
    size_t n = 0;
    for (const auto& r : m_ranks)
        n += (r->open && r->registered) ? 1 : 0;
    return n;
}

std::vector<ProbeAgent::Rank*> ProbeAgent::ranks()
{
    std::vector<Rank*> out;
    for (auto& r : m_ranks)
        if (r->registered)
            out.push_back(r.get());
    return out;
}

void ProbeAgent::accept()
{
    for (;;) {
        const int fd = ::accept(m_listen.get(), nullptr, nullptr);
        if (fd < 0)
            return;
        auto r = std::make_unique<Rank>();
        r->fd.reset(fd);
        (void)setNonBlocking(fd, true);
        m_ranks.push_back(std::move(r));
    }
}

void ProbeAgent::sendTo(Rank& r, const wire::AgentToRank& m)
{
    std::string out;
    if (!appendFrame(m, out, kMaxFrame) || !r.open)
        return;
    if (!writeAll(r.fd.get(), out.data(), out.size(), 2000))
        m_errors.push_back("write to rank failed");
}

void ProbeAgent::readRank(Rank& r)
{
    char buf[65536];
    for (;;) {
        const ssize_t n = ::recv(r.fd.get(), buf, sizeof(buf), 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            r.open = false;
            return;
        }
        if (n < 0)
            break;
        r.decoder.append(buf, size_t(n));
    }
    std::string_view payload;
    for (;;) {
        const auto res = r.decoder.next(payload);
        if (res == FrameDecoder::Result::NeedMore)
            return;
        if (res == FrameDecoder::Result::TooLarge) {
            m_errors.push_back("rank frame too large");
            r.open = false;
            return;
        }
        wire::RankToAgent msg;
        if (!parseFrame(payload, msg, "rank")) {
            m_errors.push_back("malformed rank message");
            continue;
        }
        onMessage(r, msg);
    }
}

void ProbeAgent::onChunk(Rank& r, const pb::Chunk& c)
{
    ++r.chunkCount;
    r.chunkBytes += c.ByteSizeLong();
    if (Status s = r.chunks.absorb(c); !s)
        m_errors.push_back("chunk dictionary: " + s.message());
    if (Status s = r.chunks.validate(c); !s) {
        m_errors.push_back("chunk invalid: " + s.message());
        return;
    }
    Collect v(r, r.chunks);
    r.chunks.forEach(c, v);
}

void ProbeAgent::onMessage(Rank& r, const wire::RankToAgent& m)
{
    switch (m.msg_case()) {
    case wire::RankToAgent::kRegisterRank: {
        r.registered = true;
        r.order = ++m_registrations;
        r.reg = m.register_rank();
        wire::AgentToRank w;
        auto* welcome = w.mutable_welcome();
        welcome->set_protocol_version(kProtocolVersion);
        welcome->set_accepted(true);
        welcome->set_connection_id(uint32_t(m_ranks.size()));
        welcome->set_assigned_rank(r.reg.rank() >= 0 ? r.reg.rank() : int32_t(m_ranks.size() - 1));
        sendTo(r, w);
        break;
    }
    case wire::RankToAgent::kArmed:
        if (m.armed().error() == wire::ARM_START_MISSED) {
            if (m.armed().plan() == m_plan) {
                m_missed = true;
                m_planned = false;
            }
            break;
        }
        r.armed = m.armed();
        r.armedSeen = true;
        break;
    case wire::RankToAgent::kStep: {
        const auto& b = m.step();
        r.boundaries.emplace_back(b.local_index(), b.time_ns());
        if (r.boundaries.size() > 8192)
            r.boundaries.erase(r.boundaries.begin(), r.boundaries.begin() + 4096);
        if (b.recording() && b.plan() == m_plan) {
            if (!r.firstRecordingBoundary)
                r.firstRecordingBoundary = b.time_ns();
            r.lastRecordingBoundary = b.time_ns();
            ++r.recordingBoundaries;
            if (r.recordedBoundaries.size() < 1000000)
                r.recordedBoundaries[b.local_index()] = b.time_ns();
        }
        break;
    }
    case wire::RankToAgent::kChunk:
        if (m.chunk().capture_id() == m_captureId && m.chunk().plan() == r.plan)
            onChunk(r, m.chunk().chunk());
        break;
    case wire::RankToAgent::kDone:
        r.done = true;
        r.doneMsg = m.done();
        break;
    case wire::RankToAgent::kDisarmed:
        r.disarmed = true;
        r.disarmedMsg = m.disarmed();
        break;
    case wire::RankToAgent::kStatus:
        r.lastStatus = m.status();
        break;
    case wire::RankToAgent::kGoodbye:
        r.open = false;
        break;
    default:
        break;
    }
}

void ProbeAgent::pump(int timeoutMs)
{
    std::vector<pollfd> fds;
    fds.push_back(pollfd { m_listen.get(), POLLIN, 0 });
    for (auto& r : m_ranks)
        fds.push_back(pollfd { r->open ? r->fd.get() : -1, POLLIN, 0 });
    if (::poll(fds.data(), nfds_t(fds.size()), timeoutMs) <= 0)
        return;
    if (fds[0].revents & POLLIN)
        accept();
    for (size_t i = 1; i < fds.size() && i - 1 < m_ranks.size(); ++i)
        if (fds[i].revents & (POLLIN | POLLHUP | POLLERR))
            readRank(*m_ranks[i - 1]);
}

void ProbeAgent::arm(uint64_t captureId, const pb::CaptureSettings& settings, uint32_t flushMs, size_t ranks)
{
    m_captureId = captureId;
    m_settings = settings;
    m_planned = false;
    m_missed = false;
    m_leadNs = 0;
    std::vector<Rank*> open;
    for (auto& r : m_ranks) {
        r->inCapture = false;
        if (r->open && r->registered)
            open.push_back(r.get());
    }
    // The newest registrations are the processes of the current run; older ones may be gone
    // without the probe having noticed yet.
    std::sort(open.begin(), open.end(), [](Rank* a, Rank* b) { return a->order > b->order; });
    if (ranks && open.size() > ranks)
        open.resize(ranks);
    for (Rank* r : open) {
        r->inCapture = true;
        r->armedSeen = r->done = r->disarmed = false;
        r->armed = wire::Armed();
        r->plan = 0;
        r->boundaries.clear();
        r->steps.clear();
        r->kernels.clear();
        r->recordingBoundaries = 0;
        r->recordedBoundaries.clear();
        r->firstRecordingBoundary = r->lastRecordingBoundary = 0;
        wire::AgentToRank m;
        auto* a = m.mutable_arm();
        a->set_capture_id(captureId);
        *a->mutable_settings() = settings;
        a->set_flush_interval_ms(flushMs);
        sendTo(*r, m);
    }
}

bool ProbeAgent::allArmed() const
{
    bool any = false;
    for (const auto& r : m_ranks) {
        if (!r->inCapture || !r->open)
            continue;
        if (!r->armedSeen)
            return false;
        any = true;
    }
    return any;
}

bool ProbeAgent::noneArmedOk() const
{
    if (!allArmed())
        return false;
    for (const auto& r : m_ranks)
        if (r->inCapture && r->open && r->armed.error() == wire::ARM_OK)
            return false;
    return true;
}

bool ProbeAgent::tryPlan(int64_t leadNs, uint32_t minBoundaries)
{
    if (m_planned)
        return false;
    std::vector<Rank*> rs;
    for (auto& r : m_ranks)
        if (r->inCapture && r->open && r->armedSeen && r->armed.error() == wire::ARM_OK)
            rs.push_back(r.get());
    if (rs.empty())
        return false;
    if (m_settings.steps() == 0) { // a time window needs no alignment
        ++m_plan;
        m_leadNs = std::max(leadNs, m_leadNs);
        const int64_t start = realtimeNs() + m_leadNs;
        for (Rank* r : rs) {
            r->plan = m_plan;
            wire::AgentToRank m;
            auto* s = m.mutable_start();
            s->set_capture_id(m_captureId);
            s->set_plan(m_plan);
            s->set_start_time_ns(start);
            s->set_stop_time_ns(start + int64_t(m_settings.duration_s() * 1e9));
            sendTo(*r, m);
        }
        m_planned = true;
        return true;
    }
    for (Rank* r : rs)
        if (r->boundaries.size() < minBoundaries)
            return false;
    const auto& ref = rs[0]->boundaries;
    std::vector<int64_t> gaps;
    for (size_t i = 1; i < ref.size(); ++i)
        gaps.push_back(ref[i].second - ref[i - 1].second);
    std::nth_element(gaps.begin(), gaps.begin() + long(gaps.size() / 2), gaps.end());
    const int64_t period = std::max<int64_t>(1, gaps[gaps.size() / 2]);
    std::vector<int64_t> offsets;
    int64_t newest = 0;
    for (Rank* r : rs) {
        const auto [li, lt] = r->boundaries.back();
        auto best = ref.begin();
        for (auto it = ref.begin(); it != ref.end(); ++it)
            if (std::llabs(it->second - lt) < std::llabs(best->second - lt))
                best = it;
        if (std::llabs(best->second - lt) > period / 2)
            return false; // not matched yet: try again with newer boundaries
        const int64_t off = int64_t(best->first) - int64_t(li);
        offsets.push_back(off);
        newest = std::max(newest, int64_t(li) + off);
    }
    m_leadNs = std::max(leadNs, m_leadNs * 2);
    const int64_t lead = std::max<int64_t>(2, (m_leadNs + period - 1) / period);
    const int64_t global = newest + lead;
    ++m_plan;
    for (size_t i = 0; i < rs.size(); ++i) {
        Rank* r = rs[i];
        r->plan = m_plan;
        r->startLocal = uint64_t(global - offsets[i]);
        wire::AgentToRank m;
        auto* s = m.mutable_start();
        s->set_capture_id(m_captureId);
        s->set_plan(m_plan);
        s->set_start_local_index(r->startLocal);
        s->set_steps(m_settings.steps());
        s->set_global_start_index(uint64_t(global));
        sendTo(*r, m);
    }
    m_planned = true;
    m_missed = false;
    return true;
}

void ProbeAgent::sendStart(uint64_t startLocal, uint32_t steps)
{
    ++m_plan;
    m_planned = true;
    for (auto& r : m_ranks) {
        if (!r->open || !r->inCapture)
            continue;
        r->plan = m_plan;
        r->startLocal = startLocal;
        wire::AgentToRank m;
        auto* s = m.mutable_start();
        s->set_capture_id(m_captureId);
        s->set_plan(m_plan);
        s->set_start_local_index(startLocal);
        s->set_steps(steps);
        sendTo(*r, m);
    }
}

bool ProbeAgent::allDone() const
{
    bool any = false;
    for (const auto& r : m_ranks) {
        if (!r->inCapture || r->plan != m_plan || !r->armedSeen)
            continue;
        if (!r->done && r->open)
            return false;
        any = true;
    }
    return any;
}

void ProbeAgent::disarm(const std::string& reason)
{
    for (auto& r : m_ranks) {
        if (!r->open || !r->inCapture)
            continue;
        wire::AgentToRank m;
        m.mutable_disarm()->set_capture_id(m_captureId);
        m.mutable_disarm()->set_reason(reason);
        sendTo(*r, m);
    }
}

void ProbeAgent::dropConnections()
{
    for (auto& r : m_ranks) {
        r->fd.reset();
        r->open = false;
    }
}

void ProbeAgent::finishStats()
{
    for (auto& rp : m_ranks) {
        Rank& r = *rp;
        std::sort(r.kernels.begin(), r.kernels.end());
        std::sort(r.computeKernels.begin(), r.computeKernels.end());
        for (auto& [index, s] : r.steps) {
            auto hb = r.recordedBoundaries.find(index);
            s.hostTime = hb == r.recordedBoundaries.end() ? 0 : hb->second;
            s.kernels = 0;
            s.kernelNs = 0;
            s.computeNs = 0;
            auto it = std::lower_bound(r.kernels.begin(), r.kernels.end(), std::make_pair(s.start, uint64_t(0)));
            for (; it != r.kernels.end() && it->first < s.start + int64_t(s.duration); ++it) {
                ++s.kernels;
                s.kernelNs += it->second;
            }
            auto c = std::lower_bound(
                r.computeKernels.begin(), r.computeKernels.end(), std::make_pair(s.start, uint64_t(0)));
            for (; c != r.computeKernels.end() && c->first < s.start + int64_t(s.duration); ++c)
                s.computeNs += c->second;
        }
    }
}

namespace {

// A tiny JSON writer (the probe links no model/ code).
class Json {
public:
    void open(char c)
    {
        sep();
        m_s += c;
        m_first = true;
    }
    void close(char c)
    {
        m_s += c;
        m_first = false;
    }
    void key(const std::string& k)
    {
        sep();
        str(k);
        m_s += ':';
        m_first = true;
    }
    template <typename T> void field(const std::string& k, T v)
    {
        key(k);
        value(v);
    }
    void value(const std::string& v)
    {
        sep();
        str(v);
    }
    void value(const char* v) { value(std::string(v)); }
    void value(bool v)
    {
        sep();
        m_s += v ? "true" : "false";
    }
    void value(double v)
    {
        sep();
        m_s += std::isfinite(v) ? std::to_string(v) : "null";
    }
    template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>> void value(T v)
    {
        sep();
        m_s += std::to_string(v);
    }
    const std::string& text() const { return m_s; }

private:
    void sep()
    {
        if (!m_first && !m_s.empty() && m_s.back() != '[' && m_s.back() != '{' && m_s.back() != ':')
            m_s += ',';
        m_first = false;
    }
    void str(const std::string& v)
    {
        m_s += '"';
        for (char c : v) {
            if (c == '"' || c == '\\')
                m_s += '\\';
            if (static_cast<unsigned char>(c) < 0x20)
                continue;
            m_s += c;
        }
        m_s += '"';
    }
    std::string m_s;
    bool m_first = true;
};

} // namespace

std::string ProbeAgent::json() const
{
    Json j;
    j.open('{');
    j.key("ranks");
    j.open('[');
    for (const auto& rp : m_ranks) {
        const Rank& r = *rp;
        if (!r.inCapture)
            continue;
        j.open('{');
        j.field("rank", r.reg.rank());
        j.field("pid", r.reg.pid());
        j.field("world_size", r.reg.world_size());
        j.field("host", r.reg.host());
        j.field("gpu_uuid", r.reg.gpu().uuid());
        j.field("gpu_name", r.reg.gpu().name());
        j.field("device_index", r.reg.gpu().device_index());
        j.field("cupti_api_version", r.reg.versions().cupti_api_version());
        j.field("cuda_driver_version", r.reg.versions().cuda_driver_version());
        j.field("driver_version", r.reg.versions().driver_version());
        j.field("nccl_plugin_version", r.reg.versions().nccl_profiler_plugin_version());
        j.field("cap_nccl", r.reg.capabilities().nccl());
        j.field("cap_nvtx", r.reg.capabilities().nvtx());
        j.field("armed_error", int(r.armed.error()));
        j.field("armed_message", r.armed.message());
        j.field("other_cupti_client", r.armed.other_cupti_client());
        j.field("step_rule_used", r.armed.step_rule_used());
        j.field("start_local", r.startLocal);
        j.field("plan", r.plan);
        j.field("done", r.done);
        j.field("steps_recorded", r.doneMsg.steps_recorded());
        j.field("first_recording_boundary_ns", r.firstRecordingBoundary);
        j.field("last_recording_boundary_ns", r.lastRecordingBoundary);
        j.field("recording_boundaries", r.recordingBoundaries);
        const auto& ev = r.doneMsg.overhead();
        j.key("overhead");
        j.open('{');
        j.field("steps_before", ev.steps_before());
        j.field("step_ms_median_before", ev.step_ms_median_before());
        j.field("steps_during", ev.steps_during());
        j.field("step_ms_median_during", ev.step_ms_median_during());
        j.field("arm_latency_ms", ev.arm_latency_ms());
        j.field("baseline_steps", ev.baseline_steps());
        j.field("step_ms_median_baseline", ev.step_ms_median_baseline());
        j.field("baseline_captures_before", ev.baseline_captures_before());
        j.field("captures_before", ev.captures_before());
        j.field("cupti_after_last", int(ev.cupti_after_last()));
        j.close('}');
        j.key("counters");
        j.open('{');
        for (const auto& c : r.doneMsg.counters())
            j.field(c.name(), c.value());
        j.close('}');
        j.field("status_arm_latency_ms", r.lastStatus.arm_latency_ms());
        j.field("chunks", r.chunkCount);
        j.field("chunk_bytes", r.chunkBytes);
        j.field("kernels", uint64_t(r.kernels.size()));
        j.field("memops", r.memops);
        j.field("apis", r.apis);
        j.field("syncs", r.syncs);
        j.field("nvtx", r.nvtx);
        j.field("collectives", r.collectives);
        j.key("collective_ops");
        j.open('{');
        for (const auto& [k, v] : r.collectiveOps)
            j.field(k, v);
        j.close('}');
        j.key("collective_samples");
        j.open('[');
        for (const auto& s : r.collectiveSamples)
            j.value(s);
        j.close(']');
        j.key("steps");
        j.open('[');
        for (const auto& [index, s] : r.steps) {
            j.open('{');
            j.field("index", index);
            j.field("start", s.start);
            j.field("duration_ns", s.duration);
            j.field("host_ns", s.hostTime);
            j.field("kernels", s.kernels);
            j.field("kernel_ns", s.kernelNs);
            j.field("compute_kernel_ns", s.computeNs);
            j.close('}');
        }
        j.close(']');
        j.close('}');
    }
    j.close(']');
    j.key("errors");
    j.open('[');
    for (const auto& e : m_errors)
        j.value(e);
    j.close(']');
    j.close('}');
    return j.text();
}

} // namespace gapscope::capture::probe
