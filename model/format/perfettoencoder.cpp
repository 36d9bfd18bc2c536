// SPDX-License-Identifier: MIT
#include "model/format/perfettoencoder.h"

#include "model/format/perfetto_trace_subset.pb.h"
#include "model/format/zstdcodec.h"

#include <algorithm>
#include <cstring>

namespace gapscope::format {
namespace {

namespace pp = perfetto::protos;

enum Wire : uint32_t { kVarint = 0, kFixed64 = 1, kBytes = 2 };

// Writes fields into a ByteBuffer through a raw cursor (the hot path writes a few bytes per field).
class Put {
public:
    explicit Put(ByteBuffer& b, size_t reserve = 32)
        : m_b(b)
        , m_p(b.reserve(reserve))
        , m_end(m_p + reserve)
    {
    }
    ~Put() { m_b.commit(m_p); }
    __attribute__((always_inline)) void varint(uint64_t v)
    {
        ensure(10);
        while (v >= 0x80) {
            *m_p++ = char(uint8_t(v) | 0x80);
            v >>= 7;
        }
        *m_p++ = char(v);
    }
    __attribute__((always_inline)) void raw(const void* d, size_t n)
    {
        ensure(n);
        std::memcpy(m_p, d, n);
        m_p += n;
    }

    __attribute__((always_inline)) void ensure(size_t n)
    {
        if (__builtin_expect(size_t(m_end - m_p) < n, 0))
            refill(n);
    }
    __attribute__((always_inline)) void byte(uint8_t b) { *m_p++ = char(b); } // after ensure()

private:
    __attribute__((noinline)) void refill(size_t n)
    {
        m_b.commit(m_p);
        const size_t want = std::max<size_t>(n, 64);
        m_p = m_b.reserve(want);
        m_end = m_p + want;
    }
    ByteBuffer& m_b;
    char* m_p;
    char* m_end;
};

inline void tag(Put& s, uint32_t field, uint32_t wire)
{
    s.varint((uint64_t(field) << 3) | wire);
}

inline void field(Put& s, uint32_t f, uint64_t v)
{
    tag(s, f, kVarint);
    s.varint(v);
}

inline void bytes(Put& s, uint32_t f, std::string_view v)
{
    tag(s, f, kBytes);
    s.varint(v.size());
    s.raw(v.data(), v.size());
}

inline void fixed64(Put& s, uint32_t f, uint64_t v)
{
    tag(s, f, kFixed64);
    char b[8];
    for (int i = 0; i < 8; ++i)
        b[i] = char(uint8_t(v >> (8 * i)));
    s.raw(b, 8);
}

// One-shot forms for the rare fields.
inline void field(ByteBuffer& s, uint32_t f, uint64_t v)
{
    Put p(s);
    field(p, f, v);
}
inline void bytes(ByteBuffer& s, uint32_t f, std::string_view v)
{
    Put p(s, v.size() + 12);
    bytes(p, f, v);
}

inline size_t varintSize(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        ++n;
    }
    return n;
}

// An entry {iid, name} of an interned table (EventName, EventCategory, DebugAnnotationName and
// InternedString all number iid 1 and the text 2).
void internEntry(ByteBuffer& str, uint32_t table, uint64_t iid, std::string_view text)
{
    Put s(str, text.size() + 24);
    static_assert(pp::EventName::kIidFieldNumber == 1 && pp::EventName::kNameFieldNumber == 2);
    static_assert(pp::EventCategory::kIidFieldNumber == 1 && pp::EventCategory::kNameFieldNumber == 2);
    static_assert(pp::DebugAnnotationName::kIidFieldNumber == 1 && pp::DebugAnnotationName::kNameFieldNumber == 2);
    static_assert(pp::InternedString::kIidFieldNumber == 1 && pp::InternedString::kStrFieldNumber == 2);
    tag(s, table, kBytes);
    s.varint(1 + varintSize(iid) + 1 + varintSize(text.size()) + text.size());
    field(s, 1, iid);
    bytes(s, 2, text);
}

// A DebugAnnotation {name_iid, <value field>: varint}.
void annotation(ByteBuffer& str, uint64_t nameIid, uint32_t valueField, uint64_t value)
{
    Put s(str);
    const uint64_t valueTag = uint64_t(valueField) << 3;
    if (nameIid < 0x80 && valueTag < 0x80) { // the usual case: one-byte name id and value tag
        s.ensure(16);
        s.byte(uint8_t(pp::TrackEvent::kDebugAnnotationsFieldNumber << 3 | kBytes));
        s.byte(uint8_t(3 + varintSize(value)));
        s.byte(uint8_t(pp::DebugAnnotation::kNameIidFieldNumber << 3 | kVarint));
        s.byte(uint8_t(nameIid));
        s.byte(uint8_t(valueTag));
        s.varint(value);
        return;
    }
    const size_t len = 1 + varintSize(nameIid) + varintSize(uint64_t(valueField) << 3) + varintSize(value);
    tag(s, pp::TrackEvent::kDebugAnnotationsFieldNumber, kBytes);
    s.varint(len);
    field(s, pp::DebugAnnotation::kNameIidFieldNumber, nameIid);
    field(s, valueField, value);
}

} // namespace

void PerfettoEncoder::beginEvent(uint64_t timestamp, EventType type)
{
    m_event.clear();
    m_interned.clear();
    m_timestamp = timestamp;
    field(m_event, pp::TrackEvent::kTypeFieldNumber, uint64_t(type));
}

void PerfettoEncoder::trackUuid(uint64_t uuid)
{
    field(m_event, pp::TrackEvent::kTrackUuidFieldNumber, uuid);
}
void PerfettoEncoder::nameIid(uint64_t iid)
{
    field(m_event, pp::TrackEvent::kNameIidFieldNumber, iid);
}
void PerfettoEncoder::name(std::string_view n)
{
    bytes(m_event, pp::TrackEvent::kNameFieldNumber, n);
}
void PerfettoEncoder::categoryIid(uint64_t iid)
{
    field(m_event, pp::TrackEvent::kCategoryIidsFieldNumber, iid);
}

void PerfettoEncoder::argUint(uint64_t nameIid, uint64_t value)
{
    annotation(m_event, nameIid, pp::DebugAnnotation::kUintValueFieldNumber, value);
}

void PerfettoEncoder::argInt(uint64_t nameIid, int64_t value)
{
    annotation(m_event, nameIid, pp::DebugAnnotation::kIntValueFieldNumber, uint64_t(value));
}

void PerfettoEncoder::argStringIid(uint64_t nameIid, uint64_t valueIid)
{
    annotation(m_event, nameIid, pp::DebugAnnotation::kStringValueIidFieldNumber, valueIid);
}

void PerfettoEncoder::argString(uint64_t nameIid, std::string_view value)
{
    const size_t valueTag = varintSize(uint64_t(pp::DebugAnnotation::kStringValueFieldNumber) << 3);
    Put s(m_event, value.size() + 24);
    tag(s, pp::TrackEvent::kDebugAnnotationsFieldNumber, kBytes);
    s.varint(1 + varintSize(nameIid) + valueTag + varintSize(value.size()) + value.size());
    field(s, pp::DebugAnnotation::kNameIidFieldNumber, nameIid);
    bytes(s, pp::DebugAnnotation::kStringValueFieldNumber, value);
}

void PerfettoEncoder::flow(uint64_t id)
{
    Put s(m_event);
    fixed64(s, pp::TrackEvent::kFlowIdsFieldNumber, id);
}
void PerfettoEncoder::terminatingFlow(uint64_t id)
{
    Put s(m_event);
    fixed64(s, pp::TrackEvent::kTerminatingFlowIdsFieldNumber, id);
}
void PerfettoEncoder::counterValue(int64_t v)
{
    field(m_event, pp::TrackEvent::kCounterValueFieldNumber, uint64_t(v));
}

void PerfettoEncoder::internEventName(uint64_t iid, std::string_view n)
{
    internEntry(m_interned, pp::InternedData::kEventNamesFieldNumber, iid, n);
}
void PerfettoEncoder::internCategory(uint64_t iid, std::string_view n)
{
    internEntry(m_interned, pp::InternedData::kEventCategoriesFieldNumber, iid, n);
}
void PerfettoEncoder::internArgName(uint64_t iid, std::string_view n)
{
    internEntry(m_interned, pp::InternedData::kDebugAnnotationNamesFieldNumber, iid, n);
}
void PerfettoEncoder::internArgString(uint64_t iid, std::string_view v)
{
    internEntry(m_interned, pp::InternedData::kDebugAnnotationStringValuesFieldNumber, iid, v);
}

void PerfettoEncoder::endEvent(uint32_t sequence, uint32_t flags, uint32_t clockId)
{
    m_packet.clear();
    {
        Put s(m_packet, m_event.size() + m_interned.size() + 48);
        field(s, pp::TracePacket::kTimestampFieldNumber, m_timestamp);
        if (clockId)
            field(s, pp::TracePacket::kTimestampClockIdFieldNumber, clockId);
        bytes(s, pp::TracePacket::kTrackEventFieldNumber, m_event.view());
        field(s, pp::TracePacket::kTrustedPacketSequenceIdFieldNumber, sequence);
        if (!m_interned.empty())
            bytes(s, pp::TracePacket::kInternedDataFieldNumber, m_interned.view());
        if (flags)
            field(s, pp::TracePacket::kSequenceFlagsFieldNumber, flags);
    }
    appendPacket(m_packet.view());
}

void PerfettoEncoder::appendPacket(std::string_view body)
{
    Put s(m_out, body.size() + 12);
    bytes(s, pp::Trace::kPacketFieldNumber, body);
}

void PerfettoEncoder::startSequence(
    uint32_t sequence, uint64_t trackUuid, uint32_t clockId, uint32_t referenceClock, uint64_t start, bool first)
{
    pp::TracePacket p;
    p.set_trusted_packet_sequence_id(sequence);
    p.set_sequence_flags(kStateCleared);
    if (first)
        p.set_first_packet_on_sequence(true);
    p.set_timestamp(start);
    p.set_timestamp_clock_id(referenceClock);
    pp::TracePacketDefaults* d = p.mutable_trace_packet_defaults();
    d->set_timestamp_clock_id(clockId);
    if (trackUuid)
        d->mutable_track_event_defaults()->set_track_uuid(trackUuid);
    if (clockId >= kFirstSequenceClock) {
        pp::ClockSnapshot* cs = p.mutable_clock_snapshot();
        pp::ClockSnapshot::Clock* inc = cs->add_clocks();
        inc->set_clock_id(clockId);
        inc->set_timestamp(start);
        inc->set_is_incremental(true);
        pp::ClockSnapshot::Clock* ref = cs->add_clocks();
        ref->set_clock_id(referenceClock);
        ref->set_timestamp(start);
    }
    appendPacket(p.SerializeAsString());
}

void PerfettoEncoder::trackDescriptor(uint64_t uuid, uint64_t parent, std::string_view name, int32_t pid, bool counter)
{
    pp::TracePacket p;
    pp::TrackDescriptor* t = p.mutable_track_descriptor();
    t->set_uuid(uuid);
    if (pid > 0) {
        t->mutable_process()->set_pid(pid);
        t->mutable_process()->set_process_name(std::string(name));
    } else if (parent) {
        t->set_parent_uuid(parent);
    }
    t->set_name(std::string(name));
    if (counter)
        t->mutable_counter()->set_unit(pp::CounterDescriptor::UNIT_COUNT);
    appendPacket(p.SerializeAsString());
}

void PerfettoEncoder::primaryClock(uint32_t sequence, uint32_t clock, uint64_t timestamp)
{
    pp::TracePacket p;
    p.set_trusted_packet_sequence_id(sequence);
    p.set_first_packet_on_sequence(true);
    p.set_timestamp(timestamp);
    p.set_timestamp_clock_id(clock);
    pp::ClockSnapshot* cs = p.mutable_clock_snapshot();
    cs->set_primary_trace_clock(pp::BuiltinClock(clock));
    pp::ClockSnapshot::Clock* c = cs->add_clocks();
    c->set_clock_id(clock);
    c->set_timestamp(timestamp);
    if (clock != kClockBoottime) {
        c = cs->add_clocks();
        c->set_clock_id(kClockBoottime);
        c->set_timestamp(timestamp);
    }
    appendPacket(p.SerializeAsString());
}

Status PerfettoEncoder::compress(std::string_view raw, ZstdCompressor& zstd, ByteBuffer& out, std::string& scratch)
{
    size_t pos = 0;
    while (pos < raw.size()) {
        // Take whole packets up to kMaxRawChunk (at least one).
        size_t end = pos;
        while (end < raw.size()) {
            size_t p = end + 1; // the tag of Trace.packet is one byte
            uint64_t len = 0;
            for (int shift = 0; p < raw.size(); shift += 7) {
                const auto b = uint8_t(raw[p++]);
                len |= uint64_t(b & 0x7f) << shift;
                if (!(b & 0x80))
                    break;
            }
            const size_t next = p + size_t(len);
            if (next > raw.size())
                return Status::error("perfetto packets: truncated packet at byte " + std::to_string(end));
            if (next - pos > kMaxRawChunk && end > pos)
                break;
            end = next;
        }
        if (Status s = zstd.compress(raw.data() + pos, end - pos, scratch); !s)
            return s;
        ByteBuffer body;
        bytes(body, pp::TracePacket::kZstdCompressedPacketsFieldNumber, scratch);
        bytes(out, pp::Trace::kPacketFieldNumber, body.view());
        pos = end;
    }
    return Status::ok();
}

} // namespace gapscope::format
