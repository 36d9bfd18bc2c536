// SPDX-License-Identifier: MIT
#include "model/export/chromeexport.h"

#include "model/base/json.h"
#include "model/export/exportrules.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace gapscope::model {
namespace {

// Buffered writer of the output; counts bytes, remembers the first error.
class Out {
public:
    explicit Out(std::FILE* f)
        : m_f(f)
    {
        m_buf.reserve(1 << 20);
    }
    ~Out() { flush(); }
    void put(std::string_view s)
    {
        m_buf.append(s);
        if (m_buf.size() >= (1 << 20))
            flush();
    }
    void printf(const char* fmt, ...) __attribute__((format(printf, 2, 3)))
    {
        char b[512];
        va_list ap;
        va_start(ap, fmt);
        int n = std::vsnprintf(b, sizeof b, fmt, ap);
        va_end(ap);
        put(std::string_view(b, size_t(std::max(0, std::min(n, int(sizeof b) - 1)))));
    }
    void string(std::string_view s) { json::appendEscaped(m_buf, s); }
    void flush()
    {
        if (m_buf.empty())
            return;
        if (std::fwrite(m_buf.data(), 1, m_buf.size(), m_f) != m_buf.size() && m_ok) {
            m_ok = false;
            m_error = std::strerror(errno);
        }
        m_bytes += m_buf.size();
        m_buf.clear();
    }
    bool ok() const { return m_ok; }
    const std::string& error() const { return m_error; }
    uint64_t bytes() const { return m_bytes + m_buf.size(); }

private:
    std::FILE* m_f;
    std::string m_buf;
    uint64_t m_bytes = 0;
    bool m_ok = true;
    std::string m_error;
};

// Microseconds with 3 decimals from nanoseconds, exact.
void micros(Out& o, const char* key, TimeNs ns)
{
    const char* sign = ns < 0 ? "-" : "";
    const uint64_t a = ns < 0 ? uint64_t(-ns) : uint64_t(ns);
    o.printf(",\"%s\":%s%" PRIu64 ".%03" PRIu64, key, sign, a / 1000, a % 1000);
}

uint64_t tidOf(const LaneInfo& info, LaneId id)
{
    if (info.kind == LaneKind::Collective)
        return 0xC0000000ull + id;
    return info.stream;
}

// The thread of a GPU lane's overlap track k >= 1 (OverlapLayout), apart from every stream id.
uint64_t overlapTid(LaneId id, uint32_t k)
{
    return 0xD000000000ull + uint64_t(id) * OverlapLayout::kMaxTracks + k;
}

class Exporter {
public:
    Exporter(const Trace& t, Out& o, const ChromeExportOptions& opt)
        : m_t(t)
        , m_o(o)
        , m_opt(opt)
        , m_base(t.startTime())
    {
    }
    void run(ChromeExportStats& st);

private:
    void metadata();
    void event(const Lane& lane, size_t i, uint64_t tid);
    void args(const Lane& lane, size_t i);
    void flow(const Lane& lane, size_t i, uint64_t tid);
    void steps();
    void sep()
    {
        if (m_first)
            m_first = false;
        else
            m_o.put(",\n");
    }

    const Trace& m_t;
    Out& m_o;
    const ChromeExportOptions& m_opt;
    TimeNs m_base;
    bool m_first = true;
    uint64_t m_events = 0, m_flows = 0;
};

void Exporter::metadata()
{
    for (uint32_t r : m_t.ranks()) {
        sep();
        m_o.printf("{\"ph\":\"M\",\"pid\":%u,\"name\":\"process_name\",\"args\":{\"name\":", r);
        m_o.string(rankTitle(m_t, r));
        m_o.put("}}");
        sep();
        m_o.printf("{\"ph\":\"M\",\"pid\":%u,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%u}}", r, r);
    }
    // Lanes of one host thread (its NVTX ranges, CUDA API calls, host ranges) share the thread's tid, as
    // in Kineto's traces: one thread_name per (pid, tid), naming each of its lanes once.
    std::map<std::pair<uint32_t, uint64_t>, std::vector<std::string>> titles;
    std::vector<std::pair<uint32_t, uint64_t>> order;
    for (const Lane& l : m_t.lanes()) {
        const std::pair<uint32_t, uint64_t> key { l.info.rank, tidOf(l.info, l.id) };
        std::vector<std::string>& t = titles[key];
        if (t.empty())
            order.push_back(key);
        std::string title = laneTitle(l.info);
        if (std::find(t.begin(), t.end(), title) == t.end())
            t.push_back(std::move(title));
    }
    for (const auto& key : order) {
        sep();
        m_o.printf("{\"ph\":\"M\",\"pid\":%u,\"tid\":%" PRIu64 ",\"name\":\"thread_name\",\"args\":{\"name\":",
            key.first, key.second);
        std::string name;
        for (const std::string& t : titles[key])
            name += (name.empty() ? "" : " + ") + t;
        m_o.string(name);
        m_o.put("}}");
    }
}

// Writes the arguments visitEventArgs() reports as one "args" object.
class JsonArgs final : public EventArgSink {
public:
    JsonArgs(const Trace& t, Out& o)
        : m_t(t)
        , m_o(o)
    {
    }
    void uintArg(ArgKey key, uint64_t value) override
    {
        this->key(key);
        m_o.printf("%" PRIu64, value);
    }
    void dimArg(ArgKey key, const uint32_t (&xyz)[3], uint32_t) override
    {
        this->key(key);
        m_o.printf("[%u,%u,%u]", xyz[0], xyz[1], xyz[2]);
    }
    void stringArg(ArgKey key, StringId value) override
    {
        this->key(key);
        m_o.string(m_t.str(value));
    }
    void close()
    {
        if (!m_first)
            m_o.put("}");
    }

private:
    void key(ArgKey k)
    {
        m_o.put(m_first ? ",\"args\":{\"" : ",\"");
        m_first = false;
        m_o.put(argName(k));
        m_o.put("\":");
    }
    const Trace& m_t;
    Out& m_o;
    bool m_first = true;
};

void Exporter::args(const Lane& lane, size_t i)
{
    JsonArgs sink(m_t, m_o);
    visitEventArgs(m_t, lane, i, sink);
    sink.close();
}

void Exporter::event(const Lane& lane, size_t i, uint64_t tid)
{
    const LaneEvents& ev = lane.events;
    const EventKind kind = m_t.kindOf(lane.id, i);
    sep();
    m_o.printf(
        "{\"ph\":\"X\",\"pid\":%u,\"tid\":%" PRIu64 ",\"cat\":\"%s\",\"name\":", lane.info.rank, tid, toString(kind));
    m_o.string(exportedName(m_t, lane, i));
    micros(m_o, "ts", ev.start(i) - m_base);
    micros(m_o, "dur", ev.duration(i));
    args(lane, i);
    m_o.put("}");
    ++m_events;
}

void Exporter::flow(const Lane& lane, size_t i, uint64_t tid)
{
    const EventRef launch = m_t.launchOf(lane.id, i);
    if (!launch.valid())
        return;
    const Lane& api = m_t.lane(launch.lane);
    const uint64_t id = ++m_flows;
    sep();
    m_o.printf("{\"ph\":\"s\",\"id\":%" PRIu64 ",\"pid\":%u,\"tid\":%" PRIu64 ",\"cat\":\"launch\",\"name\":\"launch\"",
        id, api.info.rank, tidOf(api.info, api.id));
    micros(m_o, "ts", api.events.start(launch.index) - m_base);
    m_o.put("}");
    sep();
    m_o.printf("{\"ph\":\"f\",\"bp\":\"e\",\"id\":%" PRIu64 ",\"pid\":%u,\"tid\":%" PRIu64
               ",\"cat\":\"launch\",\"name\":\"launch\"",
        id, lane.info.rank, tid);
    micros(m_o, "ts", lane.events.start(i) - m_base);
    m_o.put("}");
}

void Exporter::steps()
{
    for (uint32_t r : m_t.ranks())
        for (const Step& s : m_t.steps(r)) {
            if (s.end <= m_opt.from || s.start >= m_opt.to)
                continue;
            sep();
            m_o.printf(
                "{\"ph\":\"i\",\"s\":\"p\",\"pid\":%u,\"tid\":0,\"cat\":\"step\",\"name\":\"step %u\"", r, s.index);
            micros(m_o, "ts", s.start - m_base);
            m_o.put("}");
        }
}

void Exporter::run(ChromeExportStats& st)
{
    m_o.put("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"gapscope\",\"source\":");
    m_o.string(m_t.header().source);
    m_o.printf(",\"start_ns\":%" PRId64 "},\n\"traceEvents\":[\n", m_base);
    metadata();
    for (const Lane& lane : m_t.lanes()) {
        auto [first, last] = exportedRange(lane.events, m_opt.from, m_opt.to);
        // A GPU stream's work that overlaps without nesting goes to overlap threads (exportrules.h).
        const bool layout = OverlapLayout::applies(lane.info);
        OverlapLayout overlaps;
        uint32_t named = 1; // overlap threads named so far (track 0 is the lane's own)
        for (size_t i = first; i < last; ++i) {
            if (!isExported(lane.events, i, m_opt.from))
                continue;
            uint64_t tid = tidOf(lane.info, lane.id);
            if (layout) {
                const uint32_t k = overlaps.place(lane.events.start(i), lane.events.end(i)).track;
                if (k) {
                    tid = overlapTid(lane.id, k);
                    for (; named <= k; ++named) {
                        sep();
                        m_o.printf("{\"ph\":\"M\",\"pid\":%u,\"tid\":%" PRIu64
                                   ",\"name\":\"thread_name\",\"args\":{\"name\":",
                            lane.info.rank, overlapTid(lane.id, named));
                        m_o.string(overlapTrackTitle(lane.info, named));
                        m_o.put("}}");
                    }
                }
            }
            event(lane, i, tid);
            if (m_opt.flows && lane.info.kind == LaneKind::GpuStream)
                flow(lane, i, tid);
        }
    }
    steps();
    m_o.put("\n]}\n");
    st.events = m_events;
    st.flows = m_flows;
}

} // namespace

Expected<ChromeExportStats> exportChromeJson(const Trace& trace, std::FILE* f, const ChromeExportOptions& options)
{
    ChromeExportStats st;
    Out out(f);
    Exporter(trace, out, options).run(st);
    out.flush();
    if (!out.ok())
        return Status::error("write failed: " + out.error());
    st.bytes = out.bytes();
    return st;
}

Expected<ChromeExportStats> exportChromeJson(
    const Trace& trace, const std::string& path, const ChromeExportOptions& options)
{
    return writeExportFile(path, [&](std::FILE* f) { return exportChromeJson(trace, f, options); });
}

} // namespace gapscope::model
