// SPDX-License-Identifier: MIT
#include "perfettodecode.h"

#include "model/format/perfetto_trace_subset.pb.h"
#include "model/format/zstdcodec.h"

#include <google/protobuf/text_format.h>
#include <zstd.h>

#include <fstream>
#include <iterator>

namespace gapscope::testing {
namespace {

namespace pp = perfetto::protos;

constexpr uint32_t kIncrementalClock = 64;

struct Sequence {
    bool cleared = false;
    uint64_t defaultTrack = 0;
    uint32_t defaultClock = 0;
    bool incremental = false;
    uint64_t clockValue = 0; // incremental clock
    uint64_t clockBase = 0, refBase = 0; // snapshot: clock 64 at clockBase == reference at refBase
    std::map<uint64_t, std::string> names, categories, argNames, argStrings;
};

class Decoder {
public:
    Decoder(DecodedTrace& out, bool text)
        : m_out(out)
        , m_text(text)
    {
    }
    void packet(const pp::TracePacket& p);

private:
    void problem(std::string s) { m_out.problems.push_back(std::move(s)); }
    void intern(const pp::InternedData& d, Sequence& seq);
    void define(const char* table, std::map<uint64_t, std::string>& global, std::map<uint64_t, std::string>& local,
        uint64_t iid, const std::string& value);
    std::string lookup(const std::map<uint64_t, std::string>& t, uint64_t iid, const char* what);
    void event(const pp::TracePacket& p, Sequence& seq, uint64_t ts);

    DecodedTrace& m_out;
    bool m_text;
    std::map<uint32_t, Sequence> m_seqs;
    std::map<uint64_t, std::string> m_names, m_categories, m_argNames, m_argStrings; // whole file
    std::map<uint64_t, std::vector<size_t>> m_open; // per track: open slices (indices)
};

void Decoder::define(const char* table, std::map<uint64_t, std::string>& global, std::map<uint64_t, std::string>& local,
    uint64_t iid, const std::string& value)
{
    auto [it, inserted] = global.emplace(iid, value);
    if (!inserted && it->second != value)
        problem(std::string(table) + " iid " + std::to_string(iid) + " redefined");
    local[iid] = value;
}

void Decoder::intern(const pp::InternedData& d, Sequence& seq)
{
    for (const auto& e : d.event_names())
        define("event name", m_names, seq.names, e.iid(), e.name());
    for (const auto& e : d.event_categories())
        define("category", m_categories, seq.categories, e.iid(), e.name());
    for (const auto& e : d.debug_annotation_names())
        define("annotation name", m_argNames, seq.argNames, e.iid(), e.name());
    for (const auto& e : d.debug_annotation_string_values())
        define("annotation string", m_argStrings, seq.argStrings, e.iid(), e.str());
}

std::string Decoder::lookup(const std::map<uint64_t, std::string>& t, uint64_t iid, const char* what)
{
    auto it = t.find(iid);
    if (it == t.end()) {
        problem(std::string(what) + " iid " + std::to_string(iid) + " not interned on its sequence");
        return {};
    }
    return it->second;
}

void Decoder::event(const pp::TracePacket& p, Sequence& seq, uint64_t ts)
{
    const pp::TrackEvent& e = p.track_event();
    const uint64_t track = e.has_track_uuid() ? e.track_uuid() : seq.defaultTrack;
    if (e.type() == pp::TrackEvent::TYPE_SLICE_END) {
        auto& open = m_open[track];
        if (open.empty()) {
            problem("END without BEGIN on track " + std::to_string(track));
            return;
        }
        DecodedSlice& s = m_out.slices[open.back()];
        open.pop_back();
        if (ts < s.start)
            problem("slice ends before it starts: " + s.name);
        s.end = ts;
        return;
    }
    DecodedSlice s;
    s.track = track;
    s.start = s.end = ts;
    s.instant = e.type() == pp::TrackEvent::TYPE_INSTANT;
    if (e.has_name_iid())
        s.name = lookup(seq.names, e.name_iid(), "event name");
    else
        s.name = e.name();
    for (uint64_t c : e.category_iids())
        s.category = lookup(seq.categories, c, "category");
    for (const pp::DebugAnnotation& a : e.debug_annotations()) {
        const std::string key = a.has_name_iid() ? lookup(seq.argNames, a.name_iid(), "annotation name") : a.name();
        std::string v;
        switch (a.value_case()) {
        case pp::DebugAnnotation::kUintValue:
            v = std::to_string(a.uint_value());
            break;
        case pp::DebugAnnotation::kIntValue:
            v = std::to_string(a.int_value());
            break;
        case pp::DebugAnnotation::kStringValue:
            v = a.string_value();
            break;
        case pp::DebugAnnotation::kStringValueIid:
            v = lookup(seq.argStrings, a.string_value_iid(), "annotation string");
            break;
        default:
            problem("annotation " + key + " of an unexpected type");
        }
        if (!s.args.emplace(key, v).second)
            problem("annotation " + key + " twice on " + s.name);
    }
    s.flows.assign(e.flow_ids().begin(), e.flow_ids().end());
    s.terminatingFlows.assign(e.terminating_flow_ids().begin(), e.terminating_flow_ids().end());
    if (!m_out.tracks.count(track))
        problem("event on undeclared track " + std::to_string(track));
    m_out.slices.push_back(std::move(s));
    if (e.type() == pp::TrackEvent::TYPE_SLICE_BEGIN)
        m_open[track].push_back(m_out.slices.size() - 1);
    else if (e.type() != pp::TrackEvent::TYPE_INSTANT)
        problem("unexpected event type " + std::to_string(int(e.type())));
}

void Decoder::packet(const pp::TracePacket& p)
{
    ++m_out.packets;
    if (m_text) {
        std::string t;
        google::protobuf::TextFormat::PrintToString(p, &t);
        m_out.text += "packet {\n" + t + "}\n";
    }
    if (p.has_track_descriptor()) {
        const pp::TrackDescriptor& d = p.track_descriptor();
        DecodedTrack t { d.uuid(), d.parent_uuid(), d.name(), d.has_process() ? d.process().pid() : 0 };
        if (!m_out.tracks.emplace(t.uuid, t).second)
            problem("track " + std::to_string(t.uuid) + " declared twice");
        if (t.parent && !m_out.tracks.count(t.parent))
            problem("track " + t.name + " declared before its parent");
        return;
    }
    if (!p.has_trusted_packet_sequence_id() || p.trusted_packet_sequence_id() == 0) {
        problem("packet without a sequence id");
        return;
    }
    const bool known = m_seqs.count(p.trusted_packet_sequence_id()) > 0;
    Sequence& seq = m_seqs[p.trusted_packet_sequence_id()];
    if (p.first_packet_on_sequence() && known)
        problem(
            "first_packet_on_sequence on a later packet of sequence " + std::to_string(p.trusted_packet_sequence_id()));
    const uint32_t flags = p.sequence_flags();
    if (flags & pp::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED) {
        seq = Sequence {};
        seq.cleared = true;
    }
    if (p.has_trace_packet_defaults()) {
        seq.defaultClock = p.trace_packet_defaults().timestamp_clock_id();
        seq.defaultTrack = p.trace_packet_defaults().track_event_defaults().track_uuid();
    }
    if (p.has_interned_data())
        intern(p.interned_data(), seq);
    if (p.has_clock_snapshot()) {
        const pp::ClockSnapshot& cs = p.clock_snapshot();
        if (cs.has_primary_trace_clock())
            m_out.primaryClock = cs.primary_trace_clock();
        for (const auto& c : cs.clocks())
            if (c.clock_id() == kIncrementalClock) {
                seq.incremental = c.is_incremental();
                seq.clockValue = seq.clockBase = c.timestamp();
            }
        for (const auto& c : cs.clocks())
            if (c.clock_id() != kIncrementalClock)
                seq.refBase = c.timestamp();
        return;
    }
    if (!p.has_track_event())
        return;
    if (!seq.cleared || !(flags & pp::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE))
        problem("track event relies on incremental state without SEQ_NEEDS_INCREMENTAL_STATE after a clear");
    const uint32_t clock = p.has_timestamp_clock_id() ? p.timestamp_clock_id() : seq.defaultClock;
    uint64_t ts = p.timestamp();
    if (clock == kIncrementalClock) {
        if (!seq.incremental)
            problem("incremental clock used before its snapshot");
        seq.clockValue += p.timestamp();
        ts = seq.refBase + (seq.clockValue - seq.clockBase);
    } else if (clock != 1 && clock != 6) {
        problem("unknown clock " + std::to_string(clock));
    }
    event(p, seq, ts);
}

Status expand(const std::string& bytes, Decoder& d, DecodedTrace& out, bool nested)
{
    pp::Trace trace;
    if (!trace.ParseFromString(bytes))
        return Status::error("not a Perfetto Trace message");
    for (const pp::TracePacket& p : trace.packet()) {
        if (p.has_zstd_compressed_packets()) {
            if (nested)
                return Status::error("compressed packets inside compressed packets");
            const std::string& z = p.zstd_compressed_packets();
            ++out.compressedPackets;
            out.largestCompressedPacket = std::max(out.largestCompressedPacket, p.ByteSizeLong() + 4);
            const unsigned long long raw = ZSTD_getFrameContentSize(z.data(), z.size());
            if (raw == ZSTD_CONTENTSIZE_ERROR || raw == ZSTD_CONTENTSIZE_UNKNOWN)
                return Status::error("zstd frame without its size");
            std::string inner;
            format::ZstdDecompressor zd;
            if (Status s = zd.decompress(z.data(), z.size(), size_t(raw), inner); !s)
                return s;
            if (Status s = expand(inner, d, out, true); !s)
                return s;
            continue;
        }
        d.packet(p);
    }
    return Status::ok();
}

} // namespace

Expected<DecodedTrace> decodePerfetto(const std::string& bytes, bool withText)
{
    DecodedTrace out;
    Decoder d(out, withText);
    if (Status s = expand(bytes, d, out, false); !s)
        return s;
    return out;
}

std::string readFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

} // namespace gapscope::testing
