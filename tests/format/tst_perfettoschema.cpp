// SPDX-License-Identifier: MIT
// The vendored Perfetto schema (model/format/perfetto_trace_subset.proto) against the public one:
// every field and enum value the subset declares has the number Perfetto gives it. The table below
// is copied by hand from google/perfetto's protos/perfetto/... files (named per row); a field added
// to the subset without a row here, or with a number that differs, fails.
#include "model/format/perfetto_trace_subset.pb.h"

#include <QtTest>

#include <google/protobuf/descriptor.h>

#include <map>
#include <set>
#include <string>

namespace {

// "Message.field" -> number, from the public schema.
const std::map<std::string, int>& publicFields()
{
    static const std::map<std::string, int> kFields = {
        // protos/perfetto/trace/trace.proto
        { "Trace.packet", 1 },
        // protos/perfetto/trace/trace_packet.proto
        { "TracePacket.timestamp", 8 },
        { "TracePacket.timestamp_clock_id", 58 },
        { "TracePacket.track_event", 11 },
        { "TracePacket.track_descriptor", 60 },
        { "TracePacket.clock_snapshot", 6 },
        { "TracePacket.compressed_packets", 50 },
        { "TracePacket.zstd_compressed_packets", 133 },
        { "TracePacket.trusted_packet_sequence_id", 10 },
        { "TracePacket.interned_data", 12 },
        { "TracePacket.sequence_flags", 13 },
        { "TracePacket.trace_packet_defaults", 59 },
        { "TracePacket.first_packet_on_sequence", 87 },
        { "TracePacket.incremental_state_cleared", 41 },
        // protos/perfetto/trace/trace_packet_defaults.proto
        { "TracePacketDefaults.timestamp_clock_id", 58 },
        { "TracePacketDefaults.track_event_defaults", 11 },
        // protos/perfetto/trace/clock_snapshot.proto
        { "ClockSnapshot.clocks", 1 },
        { "ClockSnapshot.primary_trace_clock", 2 },
        { "ClockSnapshot.Clock.clock_id", 1 },
        { "ClockSnapshot.Clock.timestamp", 2 },
        { "ClockSnapshot.Clock.is_incremental", 3 },
        { "ClockSnapshot.Clock.unit_multiplier_ns", 4 },
        // protos/perfetto/trace/track_event/track_descriptor.proto
        { "TrackDescriptor.uuid", 1 },
        { "TrackDescriptor.parent_uuid", 5 },
        { "TrackDescriptor.name", 2 },
        { "TrackDescriptor.static_name", 10 },
        { "TrackDescriptor.process", 3 },
        { "TrackDescriptor.thread", 4 },
        { "TrackDescriptor.counter", 8 },
        // protos/perfetto/trace/track_event/process_descriptor.proto
        { "ProcessDescriptor.pid", 1 },
        { "ProcessDescriptor.cmdline", 2 },
        { "ProcessDescriptor.process_name", 6 },
        { "ProcessDescriptor.legacy_sort_index", 3 },
        // protos/perfetto/trace/track_event/thread_descriptor.proto
        { "ThreadDescriptor.pid", 1 },
        { "ThreadDescriptor.tid", 2 },
        { "ThreadDescriptor.thread_name", 5 },
        // protos/perfetto/trace/track_event/counter_descriptor.proto
        { "CounterDescriptor.unit", 3 },
        // protos/perfetto/trace/track_event/track_event.proto
        { "TrackEvent.category_iids", 3 },
        { "TrackEvent.categories", 22 },
        { "TrackEvent.name_iid", 10 },
        { "TrackEvent.name", 23 },
        { "TrackEvent.type", 9 },
        { "TrackEvent.track_uuid", 11 },
        { "TrackEvent.counter_value", 30 },
        { "TrackEvent.double_counter_value", 44 },
        { "TrackEvent.debug_annotations", 4 },
        { "TrackEvent.flow_ids", 47 },
        { "TrackEvent.terminating_flow_ids", 48 },
        { "TrackEventDefaults.track_uuid", 11 },
        { "EventCategory.iid", 1 },
        { "EventCategory.name", 2 },
        { "EventName.iid", 1 },
        { "EventName.name", 2 },
        // protos/perfetto/trace/track_event/debug_annotation.proto
        { "DebugAnnotation.name_iid", 1 },
        { "DebugAnnotation.name", 10 },
        { "DebugAnnotation.bool_value", 2 },
        { "DebugAnnotation.uint_value", 3 },
        { "DebugAnnotation.int_value", 4 },
        { "DebugAnnotation.double_value", 5 },
        { "DebugAnnotation.string_value", 6 },
        { "DebugAnnotation.string_value_iid", 17 },
        { "DebugAnnotationName.iid", 1 },
        { "DebugAnnotationName.name", 2 },
        // protos/perfetto/trace/profiling/profile_common.proto
        { "InternedString.iid", 1 },
        { "InternedString.str", 2 },
        // protos/perfetto/trace/interned_data/interned_data.proto
        { "InternedData.event_categories", 1 },
        { "InternedData.event_names", 2 },
        { "InternedData.debug_annotation_names", 3 },
        { "InternedData.debug_annotation_string_values", 29 },
    };
    return kFields;
}

// "Enum.VALUE" -> number, from the public schema.
const std::map<std::string, int>& publicEnumValues()
{
    static const std::map<std::string, int> kValues = {
        // protos/perfetto/trace/trace_packet.proto
        { "TracePacket.SequenceFlags.SEQ_UNSPECIFIED", 0 },
        { "TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED", 1 },
        { "TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE", 2 },
        // protos/perfetto/common/builtin_clock.proto
        { "BuiltinClock.BUILTIN_CLOCK_UNKNOWN", 0 },
        { "BuiltinClock.BUILTIN_CLOCK_REALTIME", 1 },
        { "BuiltinClock.BUILTIN_CLOCK_REALTIME_COARSE", 2 },
        { "BuiltinClock.BUILTIN_CLOCK_MONOTONIC", 3 },
        { "BuiltinClock.BUILTIN_CLOCK_MONOTONIC_COARSE", 4 },
        { "BuiltinClock.BUILTIN_CLOCK_MONOTONIC_RAW", 5 },
        { "BuiltinClock.BUILTIN_CLOCK_BOOTTIME", 6 },
        // protos/perfetto/trace/track_event/counter_descriptor.proto
        { "CounterDescriptor.Unit.UNIT_UNSPECIFIED", 0 },
        { "CounterDescriptor.Unit.UNIT_TIME_NS", 1 },
        { "CounterDescriptor.Unit.UNIT_COUNT", 2 },
        { "CounterDescriptor.Unit.UNIT_SIZE_BYTES", 3 },
        // protos/perfetto/trace/track_event/track_event.proto
        { "TrackEvent.Type.TYPE_UNSPECIFIED", 0 },
        { "TrackEvent.Type.TYPE_SLICE_BEGIN", 1 },
        { "TrackEvent.Type.TYPE_SLICE_END", 2 },
        { "TrackEvent.Type.TYPE_INSTANT", 3 },
        { "TrackEvent.Type.TYPE_COUNTER", 4 },
    };
    return kValues;
}

// Types Perfetto gives the fields where the wire encoding depends on it (fixed64 vs varint).
const std::map<std::string, google::protobuf::FieldDescriptor::Type>& publicTypes()
{
    using FD = google::protobuf::FieldDescriptor;
    static const std::map<std::string, FD::Type> kTypes = {
        { "TrackEvent.flow_ids", FD::TYPE_FIXED64 },
        { "TrackEvent.terminating_flow_ids", FD::TYPE_FIXED64 },
        { "TrackEvent.category_iids", FD::TYPE_UINT64 },
        { "TrackEvent.counter_value", FD::TYPE_INT64 },
        { "ThreadDescriptor.tid", FD::TYPE_INT64 },
        { "DebugAnnotation.int_value", FD::TYPE_INT64 },
        { "TracePacket.timestamp", FD::TYPE_UINT64 },
        { "TracePacket.trusted_packet_sequence_id", FD::TYPE_UINT32 },
        { "InternedString.str", FD::TYPE_BYTES },
    };
    return kTypes;
}

std::string shortName(const std::string& full)
{
    const std::string prefix = "perfetto.protos.";
    return full.rfind(prefix, 0) == 0 ? full.substr(prefix.size()) : full;
}

void collect(const google::protobuf::Descriptor* d,
    std::map<std::string, const google::protobuf::FieldDescriptor*>& fields, std::map<std::string, int>& values)
{
    for (int i = 0; i < d->field_count(); ++i)
        fields[shortName(d->full_name()) + "." + d->field(i)->name()] = d->field(i);
    for (int i = 0; i < d->nested_type_count(); ++i)
        collect(d->nested_type(i), fields, values);
    for (int e = 0; e < d->enum_type_count(); ++e)
        for (int v = 0; v < d->enum_type(e)->value_count(); ++v)
            values[shortName(d->enum_type(e)->full_name()) + "." + d->enum_type(e)->value(v)->name()]
                = d->enum_type(e)->value(v)->number();
}

} // namespace

class TestPerfettoSchema : public QObject {
    Q_OBJECT
private slots:
    void everyFieldHasPerfettosNumber()
    {
        const google::protobuf::FileDescriptor* file = perfetto::protos::Trace::descriptor()->file();
        QCOMPARE(file->package(), std::string("perfetto.protos"));
        std::map<std::string, const google::protobuf::FieldDescriptor*> fields;
        std::map<std::string, int> values;
        for (int i = 0; i < file->message_type_count(); ++i)
            collect(file->message_type(i), fields, values);
        for (int e = 0; e < file->enum_type_count(); ++e)
            for (int v = 0; v < file->enum_type(e)->value_count(); ++v)
                values[shortName(file->enum_type(e)->full_name()) + "." + file->enum_type(e)->value(v)->name()]
                    = file->enum_type(e)->value(v)->number();
        for (const auto& [name, f] : fields) {
            auto it = publicFields().find(name);
            QVERIFY2(
                it != publicFields().end(), qPrintable("no public number pinned for " + QString::fromStdString(name)));
            QVERIFY2(f->number() == it->second, qPrintable(QString::fromStdString(name)));
        }
        QCOMPARE(fields.size(), publicFields().size()); // and every pinned field is declared
        for (const auto& [name, n] : values) {
            auto it = publicEnumValues().find(name);
            QVERIFY2(it != publicEnumValues().end(),
                qPrintable("no public value pinned for " + QString::fromStdString(name)));
            QVERIFY2(n == it->second, qPrintable(QString::fromStdString(name)));
        }
        QCOMPARE(values.size(), publicEnumValues().size());
        for (const auto& [name, type] : publicTypes())
            QVERIFY2(fields.at(name)->type() == type, qPrintable(QString::fromStdString(name)));
    }

    // proto2 repeated scalars are unpacked, as Perfetto declares them; the encoder writes them so.
    void repeatedScalarsAreUnpacked()
    {
        const auto* ev = perfetto::protos::TrackEvent::descriptor();
        for (const char* f : { "flow_ids", "terminating_flow_ids", "category_iids" })
            QVERIFY(!ev->FindFieldByName(f)->is_packed());
    }
};

QTEST_GUILESS_MAIN(TestPerfettoSchema)
#include "tst_perfettoschema.moc"
