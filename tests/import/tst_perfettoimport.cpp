// SPDX-License-Identifier: MIT
// The Perfetto reader (model/import/perfettoreader.h): gapscope's own export read back (a synthetic
// trace of several ranks and steps, and a stream whose kernels overlap, which the export puts on overlap
// tracks) must give the same kernels (name, start, duration, rank, stream), steps and ranks; a trace in
// the style Perfetto's SDK writes (interned names, incremental state, sequence flags, packets inside
// deflate- and zstd-compressed packets) maps to the values built into it; damaged files keep their good
// packets and name the byte where the damage is.
#include "model/export/perfettoexport.h"
#include "model/format/perfetto_trace_subset.pb.h"
#include "model/format/zstdcodec.h"
#include "model/import/importer.h"
#include "model/open/traceopen.h"
#include "model/synth/synth.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <fstream>
#include <tuple>
#include <zlib.h>

using namespace gapscope::model;
namespace pp = perfetto::protos;

namespace {

// name, start, duration, rank, stream of every GPU kernel, sorted.
using KernelKey = std::tuple<std::string, TimeNs, TimeNs, uint32_t, uint64_t>;
std::vector<KernelKey> kernels(const Trace& t)
{
    std::vector<KernelKey> out;
    for (const Lane& l : t.lanes())
        for (size_t i = 0; i < l.events.size(); ++i)
            if (t.kindOf(l.id, i) == EventKind::Kernel)
                out.emplace_back(std::string(t.str(l.events.name(i))), l.events.start(i), l.events.duration(i),
                    l.info.rank, l.info.stream);
    std::sort(out.begin(), out.end());
    return out;
}

std::string packet(const pp::TracePacket& p)
{
    pp::Trace t;
    *t.add_packet() = p;
    return t.SerializeAsString();
}

void writeFile(const std::string& path, const std::string& bytes)
{
    std::ofstream(path, std::ios::binary) << bytes;
}

std::string readFile(const std::string& path)
{
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

} // namespace

class TstPerfettoImport : public QObject {
    Q_OBJECT
private slots:
    void roundTripSynth_data();
    void roundTripSynth();
    void roundTripOverlaps();
    void foreignWriter();
    void damagedPacketKept();
    void truncatedFile();
    void noGpuTracks();
};

void TstPerfettoImport::roundTripSynth_data()
{
    QTest::addColumn<bool>("compress");
    QTest::newRow("zstd") << true;
    QTest::newRow("plain") << false;
}

void TstPerfettoImport::roundTripSynth()
{
    QFETCH(bool, compress);
    QTemporaryDir dir;
    SynthOptions so;
    so.ranks = 4;
    so.steps = 6;
    so.kernelsPerStep = 30;
    auto src = synthesize(so);
    QVERIFY(src);
    const std::string path = dir.filePath("synth.pftrace").toStdString();
    PerfettoExportOptions eo;
    eo.compress = compress;
    eo.blockEvents = 100; // several sequence blocks per lane: incremental state cleared again
    auto st = exportPerfetto(*src, path, eo);
    QVERIFY2(st, st.status().message().c_str());
    QVERIFY(st->blocks > uint64_t(src->lanes().size()));
    QVERIFY(isImportable(path));
    auto back = openTrace({ path });
    QVERIFY2(back, back.status().message().c_str());
    QCOMPARE(back->eventCount(EventKind::Kernel), src->eventCount(EventKind::Kernel));
    QCOMPARE(back->eventCount(EventKind::Kernel), uint64_t(4 * 6 * 30));
    QVERIFY(kernels(*back) == kernels(*src));
    QCOMPARE(back->ranks(), src->ranks());
    QCOMPARE(back->stepCount(), src->stepCount());
    QCOMPARE(back->stepCount(), 6u);
    for (uint32_t r : src->ranks()) {
        QCOMPARE(back->steps(r).size(), src->steps(r).size());
        for (size_t i = 0; i < src->steps(r).size(); ++i) {
            QCOMPARE(back->steps(r)[i].start, src->steps(r)[i].start);
            QCOMPARE(back->steps(r)[i].end, src->steps(r)[i].end);
        }
    }
    QCOMPARE(back->eventCount(EventKind::Api), src->eventCount(EventKind::Api));
    QCOMPARE(back->header().source, std::string("perfetto"));
}

void TstPerfettoImport::roundTripOverlaps()
{
    // Kernels of one stream that overlap without nesting (programmatic dependent launch) go to the
    // lane's overlap tracks; they come back on the stream with their real times.
    TraceBuilder b;
    LaneInfo info;
    info.kind = LaneKind::GpuStream;
    info.rank = 1;
    info.stream = 13;
    info.name = "stream 13";
    const LaneId lane = b.lane(info);
    KernelConfig c;
    const TimeNs t0 = 1000000000;
    b.addKernel(lane, t0, 100, b.intern("a"), 1, c);
    b.addKernel(lane, t0 + 50, 100, b.intern("b"), 2, c); // overlaps a: overlap track 1
    b.addKernel(lane, t0 + 60, 100, b.intern("c"), 3, c); // overlaps both: overlap track 2
    b.addKernel(lane, t0 + 300, 10, b.intern("d"), 4, c);
    Trace src = b.finish();
    QTemporaryDir dir;
    const std::string path = dir.filePath("overlap.pftrace").toStdString();
    QVERIFY(exportPerfetto(src, path));
    auto back = importTraces({ path });
    QVERIFY2(back, back.status().message().c_str());
    QVERIFY(kernels(*back) == kernels(src));
    QCOMPARE(back->lanesOf(1, LaneKind::GpuStream).size(), size_t(1));
}

void TstPerfettoImport::foreignWriter()
{
    // In the style of Perfetto's SDK: descriptors, then sequence 7 cleared with interned names and a
    // default track; its later packets need that state; some of them inside compressed packets.
    std::string file;
    pp::TracePacket p;
    p.mutable_track_descriptor()->set_uuid(10);
    p.mutable_track_descriptor()->mutable_process()->set_pid(4242);
    p.mutable_track_descriptor()->mutable_process()->set_process_name("vllm-worker");
    file += packet(p);
    p.Clear();
    p.mutable_track_descriptor()->set_uuid(11);
    p.mutable_track_descriptor()->set_parent_uuid(10);
    p.mutable_track_descriptor()->set_name("GPU 3 compute");
    file += packet(p);
    p.Clear();
    p.mutable_track_descriptor()->set_uuid(12);
    p.mutable_track_descriptor()->mutable_thread()->set_pid(4242);
    p.mutable_track_descriptor()->mutable_thread()->set_tid(4250);
    p.mutable_track_descriptor()->mutable_thread()->set_thread_name("scheduler");
    file += packet(p);
    p.Clear();
    p.set_trusted_packet_sequence_id(7);
    p.set_sequence_flags(pp::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
    p.mutable_trace_packet_defaults()->mutable_track_event_defaults()->set_track_uuid(11);
    auto* names = p.mutable_interned_data();
    auto* n = names->add_event_names();
    n->set_iid(1);
    n->set_name("gemm_bf16");
    n = names->add_event_names();
    n->set_iid(2);
    n->set_name("schedule");
    auto* cat = names->add_event_categories();
    cat->set_iid(1);
    cat->set_name("gpu");
    file += packet(p);
    auto event = [](uint64_t ts, pp::TrackEvent::Type type, uint64_t nameIid, uint64_t track) {
        pp::TracePacket e;
        e.set_trusted_packet_sequence_id(7);
        e.set_sequence_flags(pp::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
        e.set_timestamp(ts);
        e.mutable_track_event()->set_type(type);
        if (nameIid)
            e.mutable_track_event()->set_name_iid(nameIid);
        e.mutable_track_event()->add_category_iids(1);
        if (track)
            e.mutable_track_event()->set_track_uuid(track);
        return packet(e);
    };
    file += event(1000, pp::TrackEvent::TYPE_SLICE_BEGIN, 1, 0);
    file += event(1400, pp::TrackEvent::TYPE_SLICE_END, 0, 0);
    file += event(900, pp::TrackEvent::TYPE_SLICE_BEGIN, 2, 12);
    file += event(1500, pp::TrackEvent::TYPE_SLICE_END, 0, 12);
    // Two more kernels, deflate-compressed; one more zstd-compressed.
    std::string inner = event(2000, pp::TrackEvent::TYPE_SLICE_BEGIN, 1, 0)
        + event(2250, pp::TrackEvent::TYPE_SLICE_END, 0, 0) + event(3000, pp::TrackEvent::TYPE_INSTANT, 1, 0);
    uLongf size = compressBound(uLong(inner.size()));
    std::string deflated(size, '\0');
    QCOMPARE(compress2(reinterpret_cast<Bytef*>(deflated.data()), &size, reinterpret_cast<const Bytef*>(inner.data()),
                 uLong(inner.size()), 6),
        Z_OK);
    deflated.resize(size);
    p.Clear();
    p.set_compressed_packets(deflated);
    file += packet(p);
    std::string zstd;
    gapscope::format::ZstdCompressor zc;
    const std::string zin
        = event(4000, pp::TrackEvent::TYPE_SLICE_BEGIN, 1, 0) + event(4100, pp::TrackEvent::TYPE_SLICE_END, 0, 0);
    QVERIFY(zc.compress(zin.data(), zin.size(), zstd));
    p.Clear();
    p.set_zstd_compressed_packets(zstd);
    file += packet(p);
    // A packet of another sequence that needs state it never got: dropped, counted.
    p.Clear();
    p.set_trusted_packet_sequence_id(9);
    p.set_sequence_flags(pp::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
    p.set_timestamp(5000);
    p.mutable_track_event()->set_type(pp::TrackEvent::TYPE_INSTANT);
    p.mutable_track_event()->set_name_iid(1);
    p.mutable_track_event()->set_track_uuid(11);
    file += packet(p);

    QTemporaryDir dir;
    const std::string path = dir.filePath("sdk.perfetto-trace").toStdString();
    writeFile(path, file);
    auto t = importTraces({ path });
    QVERIFY2(t, t.status().message().c_str());
    const auto k = kernels(*t);
    QCOMPARE(k.size(), size_t(4));
    QCOMPARE(k[0], KernelKey("gemm_bf16", 1000, 400, 0, 1000001));
    QCOMPARE(std::get<1>(k[1]), TimeNs(2000));
    QCOMPARE(std::get<2>(k[1]), TimeNs(250));
    QCOMPARE(std::get<2>(k[2]), TimeNs(0)); // the instant
    QCOMPARE(std::get<1>(k[3]), TimeNs(4000));
    QCOMPARE(t->header().ranks.size(), size_t(1));
    QCOMPARE(t->header().ranks[0].pid, 4242u);
    QCOMPARE(t->lane(t->lanesOf(0, LaneKind::GpuStream)[0]).info.device, 3u);
    QCOMPARE(t->eventCount(EventKind::Host), uint64_t(1)); // "schedule" on the thread
    bool needsState = false;
    for (const Counter& c : t->header().counters)
        needsState = needsState || (c.detail.find("incremental state") != std::string::npos && c.value == 1);
    QVERIFY(needsState);
}

void TstPerfettoImport::damagedPacketKept()
{
    SynthOptions so;
    so.ranks = 2;
    so.steps = 3;
    so.kernelsPerStep = 10;
    auto src = synthesize(so);
    QVERIFY(src);
    QTemporaryDir dir;
    const std::string good = dir.filePath("good.pftrace").toStdString();
    PerfettoExportOptions eo;
    eo.compress = false;
    QVERIFY(exportPerfetto(*src, good, eo));
    std::string bytes = readFile(good);
    // Damage one packet's body in the middle (framing intact): 0xff bytes are no valid field.
    size_t at = 0, index = 0, damaged = 0;
    while (at < bytes.size()) {
        size_t k = at + 1;
        uint64_t len = 0;
        for (int shift = 0;; shift += 7) {
            const auto b = uint8_t(bytes[k++]);
            len |= uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80))
                break;
        }
        if (++index == 40) {
            damaged = at;
            for (size_t i = 0; i < std::min<uint64_t>(len, 4); ++i)
                bytes[k + i] = char(0xff);
        }
        at = k + len;
    }
    const std::string bad = dir.filePath("bad.pftrace").toStdString();
    writeFile(bad, bytes);
    auto t = importTraces({ bad });
    QVERIFY2(t, t.status().message().c_str());
    QVERIFY(t->eventCount(EventKind::Kernel) >= src->eventCount(EventKind::Kernel) - 1);
    bool named = false;
    for (const auto& w : t->warnings())
        named = named || w.find("byte " + std::to_string(damaged)) != std::string::npos;
    QVERIFY2(named, ("no warning names byte " + std::to_string(damaged)).c_str());
}

void TstPerfettoImport::truncatedFile()
{
    SynthOptions so;
    so.ranks = 2;
    so.steps = 3;
    so.kernelsPerStep = 10;
    auto src = synthesize(so);
    QTemporaryDir dir;
    const std::string good = dir.filePath("good.pftrace").toStdString();
    PerfettoExportOptions eo;
    eo.compress = false;
    QVERIFY(exportPerfetto(*src, good, eo));
    std::string bytes = readFile(good);
    bytes.resize(bytes.size() - 7);
    const std::string cut = dir.filePath("cut.pftrace").toStdString();
    writeFile(cut, bytes);
    auto t = importTraces({ cut });
    QVERIFY2(t, t.status().message().c_str());
    QVERIFY(t->eventCount(EventKind::Kernel) >= src->eventCount(EventKind::Kernel) - 1);
    bool warned = false;
    for (const auto& w : t->warnings())
        warned = warned || w.find("cut short") != std::string::npos;
    QVERIFY(warned);
}

void TstPerfettoImport::noGpuTracks()
{
    pp::TracePacket p;
    p.mutable_track_descriptor()->set_uuid(5);
    p.mutable_track_descriptor()->set_name("main thread");
    std::string file = packet(p);
    p.Clear();
    p.set_timestamp(10);
    p.mutable_track_event()->set_type(pp::TrackEvent::TYPE_INSTANT);
    p.mutable_track_event()->set_name("tick");
    p.mutable_track_event()->set_track_uuid(5);
    file += packet(p);
    QTemporaryDir dir;
    const std::string path = dir.filePath("cpu.pftrace").toStdString();
    writeFile(path, file);
    auto t = importTraces({ path });
    QVERIFY(!t);
    QVERIFY2(t.status().message().find("Perfetto trace: 2 packets, no GPU tracks/slices: nothing to import")
            != std::string::npos,
        t.status().message().c_str());
}

QTEST_GUILESS_MAIN(TstPerfettoImport)
#include "tst_perfettoimport.moc"
