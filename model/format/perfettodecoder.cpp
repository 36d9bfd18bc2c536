// SPDX-License-Identifier: MIT
#include "model/format/perfettodecoder.h"

#include "model/format/perfetto_trace_subset.pb.h"

namespace gapscope::format {

namespace pp = perfetto::protos;

struct PerfettoDecoder::Impl {
    pp::TracePacket packet;
};

namespace {

void copyInterned(const pp::InternedData& d, PerfettoPacket& out)
{
    for (const auto& e : d.event_names())
        out.eventNames.push_back({ e.iid(), e.name() });
    for (const auto& e : d.event_categories())
        out.categories.push_back({ e.iid(), e.name() });
    for (const auto& e : d.debug_annotation_names())
        out.argNames.push_back({ e.iid(), e.name() });
    for (const auto& e : d.debug_annotation_string_values())
        out.argStrings.push_back({ e.iid(), e.str() });
}

PerfettoPacket::Arg arg(const pp::DebugAnnotation& a)
{
    using Type = PerfettoPacket::Arg::Type;
    PerfettoPacket::Arg out;
    out.nameIid = a.has_name_iid() ? a.name_iid() : 0;
    out.name = a.has_name() ? a.name() : std::string();
    switch (a.value_case()) {
    case pp::DebugAnnotation::kBoolValue:
        out.type = Type::Bool;
        out.uintValue = a.bool_value();
        break;
    case pp::DebugAnnotation::kUintValue:
        out.type = Type::Uint;
        out.uintValue = a.uint_value();
        break;
    case pp::DebugAnnotation::kIntValue:
        out.type = Type::Int;
        out.intValue = a.int_value();
        break;
    case pp::DebugAnnotation::kDoubleValue:
        out.type = Type::Double;
        out.doubleValue = a.double_value();
        break;
    case pp::DebugAnnotation::kStringValue:
        out.type = Type::String;
        out.stringValue = a.string_value();
        break;
    case pp::DebugAnnotation::kStringValueIid:
        out.type = Type::StringIid;
        out.uintValue = a.string_value_iid();
        break;
    default:
        break;
    }
    return out;
}

void copyEvent(const pp::TrackEvent& e, PerfettoPacket::Event& out)
{
    out.type = uint32_t(e.type());
    out.hasTrack = e.has_track_uuid();
    out.track = e.track_uuid();
    out.nameIid = e.has_name_iid() ? e.name_iid() : 0;
    out.name = e.has_name() ? e.name() : std::string();
    out.categoryIids.assign(e.category_iids().begin(), e.category_iids().end());
    out.categories.assign(e.categories().begin(), e.categories().end());
    if (e.has_counter_value()) {
        out.hasCounter = true;
        out.counter = double(e.counter_value());
    } else if (e.has_double_counter_value()) {
        out.hasCounter = true;
        out.counter = e.double_counter_value();
    }
    for (const auto& a : e.debug_annotations())
        out.args.push_back(arg(a));
}

void copyTrack(const pp::TrackDescriptor& t, PerfettoPacket::Track& out)
{
    out.uuid = t.uuid();
    out.parent = t.parent_uuid();
    out.name = t.has_name() ? t.name() : t.has_static_name() ? t.static_name() : std::string();
    if (t.has_process()) {
        out.isProcess = true;
        out.pid = t.process().pid();
        out.processName = t.process().process_name();
    }
    if (t.has_thread()) {
        out.isThread = true;
        out.pid = t.thread().pid();
        out.tid = t.thread().tid();
        out.threadName = t.thread().thread_name();
    }
    out.isCounter = t.has_counter();
}

} // namespace

PerfettoDecoder::PerfettoDecoder()
    : m_impl(std::make_unique<Impl>())
{
}

PerfettoDecoder::~PerfettoDecoder() = default;

bool PerfettoDecoder::decode(const char* data, size_t size, PerfettoPacket& out)
{
    out = PerfettoPacket {};
    pp::TracePacket& p = m_impl->packet;
    if (size > size_t(INT32_MAX) || !p.ParseFromArray(data, int(size)))
        return false;
    out.hasTimestamp = p.has_timestamp();
    out.timestamp = p.timestamp();
    out.clockId = p.timestamp_clock_id();
    out.sequence = p.trusted_packet_sequence_id();
    out.flags = p.sequence_flags() | (p.incremental_state_cleared() ? kStateCleared : 0);
    if (p.has_trace_packet_defaults()) {
        const pp::TracePacketDefaults& d = p.trace_packet_defaults();
        out.hasDefaults = true;
        out.defaultClock = d.timestamp_clock_id();
        out.hasDefaultTrack = d.has_track_event_defaults() && d.track_event_defaults().has_track_uuid();
        out.defaultTrack = d.track_event_defaults().track_uuid();
    }
    if (p.has_interned_data())
        copyInterned(p.interned_data(), out);
    switch (p.data_case()) {
    case pp::TracePacket::kTrackEvent:
        out.data = PerfettoPacket::Data::TrackEvent;
        copyEvent(p.track_event(), out.event);
        break;
    case pp::TracePacket::kTrackDescriptor:
        out.data = PerfettoPacket::Data::TrackDescriptor;
        copyTrack(p.track_descriptor(), out.track);
        break;
    case pp::TracePacket::kClockSnapshot:
        out.data = PerfettoPacket::Data::ClockSnapshot;
        for (const auto& c : p.clock_snapshot().clocks())
            out.clocks.push_back({ c.clock_id(), c.timestamp(), c.is_incremental(),
                c.has_unit_multiplier_ns() ? c.unit_multiplier_ns() : 1 });
        out.primaryClock = uint32_t(p.clock_snapshot().primary_trace_clock());
        break;
    case pp::TracePacket::kCompressedPackets:
        out.data = PerfettoPacket::Data::Deflate;
        out.payload = p.compressed_packets();
        break;
    case pp::TracePacket::kZstdCompressedPackets:
        out.data = PerfettoPacket::Data::Zstd;
        out.payload = p.zstd_compressed_packets();
        break;
    default:
        break;
    }
    return true;
}

} // namespace gapscope::format
