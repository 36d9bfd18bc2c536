// SPDX-License-Identifier: MIT
#include "model/import/perfettotracks.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace gapscope::model::importer {
namespace {

bool startsWith(std::string_view s, std::string_view p)
{
    return s.size() >= p.size() && s.compare(0, p.size(), p) == 0;
}

bool containsNoCase(std::string_view s, std::string_view p)
{
    auto it = std::search(s.begin(), s.end(), p.begin(), p.end(),
        [](char a, char b) { return std::tolower(uint8_t(a)) == std::tolower(uint8_t(b)); });
    return it != s.end();
}

// The number right after `word` in `s` ("stream 7" -> 7), or -1.
int64_t numberAfter(std::string_view s, std::string_view word)
{
    const size_t at = s.find(word);
    if (at == std::string_view::npos)
        return -1;
    size_t i = at + word.size();
    int64_t v = -1;
    while (i < s.size() && std::isdigit(uint8_t(s[i])) && v < (int64_t(1) << 40))
        v = (v < 0 ? 0 : v * 10) + (s[i++] - '0');
    return v;
}

// "<lane> (overlapping k)": gapscope's overlap tracks of one GPU lane.
std::string withoutOverlap(const std::string& name)
{
    const size_t at = name.rfind(" (overlapping ");
    return at != std::string::npos && !name.empty() && name.back() == ')' ? name.substr(0, at) : name;
}

bool isGpuName(std::string_view name)
{
    return startsWith(name, "GPU") || containsNoCase(name, "stream") || containsNoCase(name, "queue");
}

LaneKind laneKindOf(EventKind kind)
{
    switch (kind) {
    case EventKind::Kernel:
    case EventKind::Memcpy:
    case EventKind::Memset:
        return LaneKind::GpuStream;
    case EventKind::Api:
    case EventKind::Sync:
        return LaneKind::CpuApi;
    case EventKind::Nvtx:
        return LaneKind::Nvtx;
    case EventKind::Collective:
        return LaneKind::Collective;
    case EventKind::Host:
        break;
    }
    return LaneKind::CpuThread;
}

CopyKind copyKindOf(const std::string& s)
{
    if (s.find("HtoD") != std::string::npos)
        return CopyKind::HtoD;
    if (s.find("DtoH") != std::string::npos)
        return CopyKind::DtoH;
    if (s.find("DtoD") != std::string::npos)
        return CopyKind::DtoD;
    if (s.find("HtoH") != std::string::npos)
        return CopyKind::HtoH;
    if (s.find("PtoP") != std::string::npos)
        return CopyKind::PtoP;
    return CopyKind::Unknown;
}

} // namespace

uint32_t PerfettoTracks::track(uint64_t uuid)
{
    auto [it, added] = m_index.emplace(uuid, uint32_t(m_tracks.size()));
    if (added) {
        PerfettoTrack t;
        t.uuid = uuid;
        m_tracks.push_back(std::move(t));
    }
    return it->second;
}

void PerfettoTracks::describe(const PerfettoTrack& t)
{
    PerfettoTrack& to = m_tracks[track(t.uuid)];
    to = t;
    to.described = true;
}

int64_t PerfettoTracks::processOf(uint32_t t) const
{
    // The nearest ancestor with a process descriptor; a cycle or a chain deeper than 64 has none.
    int32_t threadPid = 0;
    uint32_t at = t;
    for (int depth = 0; depth < 64; ++depth) {
        const PerfettoTrack& tr = m_tracks[at];
        if (tr.isProcess)
            return at;
        if (tr.isThread && !threadPid)
            threadPid = tr.pid;
        auto parent = tr.parent ? m_index.find(tr.parent) : m_index.end();
        if (parent == m_index.end())
            break;
        at = parent->second;
    }
    if (threadPid)
        for (uint32_t i = 0; i < m_tracks.size(); ++i)
            if (m_tracks[i].isProcess && m_tracks[i].pid == threadPid)
                return i;
    return -1;
}

PerfettoTracks::Resolved PerfettoTracks::resolve(uint32_t t) const
{
    Resolved r;
    const PerfettoTrack& tr = m_tracks[t];
    r.process = processOf(t);
    r.base = withoutOverlap(tr.name);
    auto parent = tr.parent ? m_index.find(tr.parent) : m_index.end();
    const bool underProcess = parent != m_index.end() && m_tracks[parent->second].isProcess;
    if (tr.isCounter)
        r.special = Resolved::Special::Counter;
    else if (underProcess && tr.name == "steps")
        r.special = Resolved::Special::Steps;
    else if (tr.name == "annotations" || tr.name == "budget waterfall")
        r.special = Resolved::Special::Skipped;
    r.gpu = !tr.isProcess && !tr.isThread
        && (isGpuName(r.base)
            || (parent != m_index.end() && !m_tracks[parent->second].isProcess
                && isGpuName(m_tracks[parent->second].name)));
    return r;
}

uint16_t PerfettoTracks::stagedProcess(int64_t processTrack, StagedTrace& out)
{
    if (auto it = m_processes.find(processTrack); it != m_processes.end())
        return it->second;
    StagedProcess p;
    if (processTrack >= 0) {
        const PerfettoTrack& tr = m_tracks[size_t(processTrack)];
        const std::string& title = tr.processName.empty() ? tr.name : tr.processName;
        p.pid = uint32_t(tr.pid);
        p.name = title;
        // gapscope's rank title: "rank N · host · GPU d (name)".
        if (startsWith(title, "rank ") && numberAfter(title, "rank ") >= 0)
            p.rank = uint32_t(numberAfter(title, "rank "));
        if (const int64_t d = numberAfter(title, "GPU "); d >= 0)
            p.device = uint32_t(d);
        const std::string sep = " \xC2\xB7 ";
        const size_t a = title.find(sep);
        const size_t b = a == std::string::npos ? a : title.find(sep, a + sep.size());
        if (p.rank && b != std::string::npos)
            p.host = title.substr(a + sep.size(), b - a - sep.size());
    } else {
        p.name = "(no process)";
    }
    const uint16_t id = out.addProcess(std::move(p));
    m_processes.emplace(processTrack, id);
    return id;
}

uint32_t PerfettoTracks::laneOf(uint32_t t, const Resolved& r, EventKind kind, uint16_t process, StagedTrace& out)
{
    const PerfettoTrack& tr = m_tracks[t];
    const LaneKind laneKind = laneKindOf(kind);
    const StagedProcess& p = out.process(process);
    uint32_t device = p.device.value_or(0);
    int64_t stream = -1;
    std::string name = r.base;
    if (laneKind == LaneKind::GpuStream) {
        // gapscope titles a stream "GPU stream 7"; other writers name a device "GPU 1".
        if (startsWith(name, "GPU ") && name.size() > 4 && !std::isdigit(uint8_t(name[4])))
            name = name.substr(4);
        else if (const int64_t d = numberAfter(name, "GPU "); d >= 0)
            device = uint32_t(d);
        stream = numberAfter(name, "stream ");
        if (stream < 0)
            stream = numberAfter(name, "queue ");
    } else if (tr.isThread) {
        stream = tr.tid;
        if (name.empty())
            name = "thread " + std::to_string(tr.tid);
    } else {
        stream = numberAfter(name, "thread ");
    }
    if (stream < 0) {
        auto [it, added] = m_streamIds.emplace(std::to_string(process) + "/" + name, 0);
        if (added)
            it->second = 1000000 + m_streamIds.size();
        stream = int64_t(it->second);
    }
    const uint32_t lane = out.lane(process, laneKind, device, uint64_t(stream));
    if (lane != StagedTrace::kNoLane && out.laneAt(lane).info.name.empty())
        out.laneAt(lane).info.name = name.empty() ? "track " + std::to_string(tr.uuid) : name;
    return lane;
}

uint64_t PerfettoTracks::stage(
    const std::vector<PerfettoSlice>& slices, const std::vector<PerfettoSliceArgs>& args, StagedTrace& out)
{
    std::vector<Resolved> resolved(m_tracks.size());
    for (uint32_t t = 0; t < m_tracks.size(); ++t)
        resolved[t] = resolve(t);
    auto kindOf = [&](const PerfettoSlice& s) {
        if (s.kind >= 0)
            return EventKind(s.kind);
        if (!resolved[s.track].gpu)
            return EventKind::Host;
        const std::string_view name = out.strings().str(s.name);
        return containsNoCase(name.substr(0, 6), "memcpy") ? EventKind::Memcpy
            : containsNoCase(name.substr(0, 6), "memset")  ? EventKind::Memset
                                                           : EventKind::Kernel;
    };
    auto isGpu = [](EventKind k) { return k == EventKind::Kernel || k == EventKind::Memcpy || k == EventKind::Memset; };
    // Processes with GPU work are ranks; the others are skipped.
    std::unordered_map<int64_t, bool> gpuProcess;
    for (const PerfettoSlice& s : slices)
        if (resolved[s.track].special == Resolved::Special::None && isGpu(kindOf(s)))
            gpuProcess[resolved[s.track].process] = true;
    uint64_t gpuEvents = 0, skipped = 0, otherProcesses = 0;
    static const PerfettoSliceArgs kNoArgs;
    for (const PerfettoSlice& s : slices) {
        const Resolved& r = resolved[s.track];
        if (r.special == Resolved::Special::Skipped || r.special == Resolved::Special::Counter) {
            ++skipped;
            continue;
        }
        if (!gpuProcess.count(r.process)) {
            ++otherProcesses;
            continue;
        }
        const uint16_t process = stagedProcess(r.process, out);
        const PerfettoSliceArgs& a = s.args == UINT32_MAX ? kNoArgs : args[s.args];
        if (r.special == Resolved::Special::Steps) {
            const int64_t index = a.step >= 0 ? a.step : numberAfter(out.strings().str(s.name), "step ");
            if (index < 0 || index > INT32_MAX) {
                ++skipped;
                continue;
            }
            out.steps.push_back({ process, Step(uint32_t(index), s.start, s.start + s.duration, StepSource::File) });
            continue;
        }
        const EventKind kind = kindOf(s);
        const uint32_t lane = laneOf(s.track, r, kind, process, out);
        if (lane == StagedTrace::kNoLane)
            continue;
        const uint32_t corr = uint32_t(a.correlation);
        switch (kind) {
        case EventKind::Kernel:
            out.addKernel(lane, s.start, s.duration, s.name, corr, out.config(a.config));
            ++gpuEvents;
            break;
        case EventKind::Memcpy:
        case EventKind::Memset: {
            MemopInfo m;
            m.kind = kind == EventKind::Memcpy ? MemopKind::Memcpy : MemopKind::Memset;
            m.copyKind = copyKindOf(a.copyKind.empty() ? std::string(out.strings().str(s.name)) : a.copyKind);
            m.bytes = a.bytes;
            out.addMemop(lane, s.start, s.duration, s.name, corr, m);
            ++gpuEvents;
            break;
        }
        case EventKind::Api:
            out.addApi(lane, s.start, s.duration, s.name, corr, ApiKind::Runtime);
            break;
        case EventKind::Sync:
            out.addSync(lane, s.start, s.duration, s.name, corr, SyncInfo {});
            break;
        case EventKind::Nvtx:
            out.addRange(lane, s.start, s.duration, s.name);
            break;
        case EventKind::Collective: {
            CollectiveInfo c;
            c.bytes = a.bytes;
            out.addCollective(lane, s.start, s.duration, s.name, c);
            break;
        }
        case EventKind::Host:
            out.addHost(lane, s.start, s.duration, s.name, HostKind::UserAnnotation);
            break;
        }
    }
    if (skipped)
        out.count(format::Stat::ImportSkippedEvents,
            "slices of annotation, budget waterfall and counter tracks (derived or not modelled)", skipped);
    if (otherProcesses)
        out.count(format::Stat::ImportSkippedEvents, "slices of processes without GPU tracks", otherProcesses);
    return gpuEvents;
}

} // namespace gapscope::model::importer
