// SPDX-License-Identifier: MIT
// The .gapscope file: round trips, cut files, flipped bytes, version skew, sections.
#include "randomtrace.h"
#include "tests/unprivileged.h"

#include "model/format/chunkdecoder.h"
#include "model/format/tracereader.h"
#include "model/format/tracewriter.h"
#include "model/io/tracefile.h"
#include "model/io/tracemetaproto.h"
#include "model/open/traceopen.h"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <random>
#include <unistd.h>

using namespace gapscope;
using namespace gapscope::model;

namespace {

std::string readAll(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

uint64_t counter(const Trace& t, const std::string& name)
{
    for (const auto& c : t.header().counters)
        if (c.name == name)
            return c.value;
    return 0;
}

} // namespace

class TestTraceFile : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::string path(const char* name) const { return (m_dir.path() + "/" + name).toStdString(); }

    // A small trace written with small chunks, so there are many frames to cut between.
    std::string writeSmall(const char* name, Trace* keep = nullptr)
    {
        Trace t = test::randomTrace({ 2, 300, 7, true });
        WriteOptions wo;
        wo.eventsPerChunk = 97;
        const std::string p = path(name);
        if (Status s = writeTraceFile(t, p, wo); !s)
            qFatal("%s", s.message().c_str());
        if (keep)
            *keep = std::move(t);
        return p;
    }

private slots:
    void roundTrip_data()
    {
        QTest::addColumn<uint32_t>("ranks");
        QTest::addColumn<uint32_t>("events");
        QTest::addColumn<uint32_t>("chunk");
        QTest::addColumn<int>("threads");
        QTest::newRow("one event per chunk") << 1u << 40u << 1u << 2;
        QTest::newRow("small chunks") << 3u << 700u << 128u << 2;
        QTest::newRow("one chunk") << 2u << 300u << 1000000u << 1;
        QTest::newRow("default chunks, 4 threads") << 4u << 20000u << 65536u << 4;
    }
    void roundTrip()
    {
        QFETCH(uint32_t, ranks);
        QFETCH(uint32_t, events);
        QFETCH(uint32_t, chunk);
        QFETCH(int, threads);
        Trace t = test::randomTrace({ ranks, events, ranks * 31 + events, true });
        WriteOptions wo;
        wo.eventsPerChunk = chunk;
        const std::string p = path("rt.gapscope");
        QVERIFY(writeTraceFile(t, p, wo).isOk());
        ReadOptions ro;
        ro.threads = unsigned(threads);
        auto back = readTraceFile(p, ro);
        QVERIFY2(back.hasValue(), back.error().c_str());
        QVERIFY2(back->warnings().empty(), back->warnings().empty() ? "" : back->warnings()[0].c_str());
        const std::string diff = test::compareTraces(t, *back);
        QVERIFY2(diff.empty(), diff.c_str());
        // Writing the read trace again gives the same bytes (the format is deterministic).
        QVERIFY(writeTraceFile(*back, path("rt2.gapscope"), wo).isOk());
        QCOMPARE(readAll(path("rt2.gapscope")).size(), readAll(p).size());
    }

    // The dictionaries' launch configs and lanes convert in tracemetaproto only: a launch config keeps
    // its nine fields (the graph ids travel with each kernel instead), a lane its identity and name,
    // and a lane kind this build does not know reads as unknown.
    void dictionaryConversions()
    {
        KernelConfig k;
        k.grid[0] = 1, k.grid[1] = 2, k.grid[2] = 3, k.block[0] = 4, k.block[1] = 5, k.block[2] = 6;
        k.registers = 7, k.sharedStatic = 8, k.sharedDynamic = 9, k.graphId = 10, k.graphNodeId = 11;
        const pb::LaunchConfig lc = toProto(k);
        QCOMPARE(lc.grid_z(), 3u);
        QCOMPARE(lc.block_x(), 4u);
        QCOMPARE(lc.shared_dynamic(), 9u);
        KernelConfig back = fromProto(lc);
        QCOMPARE(back.graphId, uint64_t(0));
        QCOMPARE(back.graphNodeId, uint64_t(0));
        back.graphId = k.graphId;
        back.graphNodeId = k.graphNodeId;
        QVERIFY(back == k);

        const LaneInfo lane { LaneKind::CpuThread, 3, "host-a", 2, 99, "main CPU", 1234 };
        pb::LaneDef def = toProto(lane);
        QCOMPARE(def.kind(), pb::LANE_CPU_THREAD);
        const LaneInfo read = fromProto(def);
        QCOMPARE(read.identity(), lane.identity());
        QCOMPARE(read.name, lane.name);
        def.set_kind(pb::LaneKind(42));
        QCOMPARE(fromProto(def).kind, LaneKind::Unknown);
    }

    void overheadEvidenceRoundTrip()
    {
        // Every field of a rank's overhead evidence, the baseline and the state after the last
        // capture included, comes back from the file as written.
        TraceBuilder b;
        TraceHeader& h = b.header();
        h.source = "test";
        RankInfo& ri = h.ranks.emplace_back();
        ri.rank = 3;
        ri.hasOverhead = true;
        OverheadEvidence& o = ri.overhead;
        o.stepsBefore = 61;
        o.stepMsMedianBefore = 2.21;
        o.stepsDuring = 20;
        o.stepMsMedianDuring = 2.31;
        o.armLatencyMs = 4.5;
        o.disarmLatencyMs = 0.75;
        o.baselineSteps = 200;
        o.stepMsMedianBaseline = 2.17;
        o.baselineCapturesBefore = 1;
        o.capturesBefore = 2;
        o.cuptiAfterLast = OverheadEvidence::CuptiAfterLast::StillAttached;
        const LaneId gpu = b.lane({ LaneKind::GpuStream, 3, "host", 0, 7, "", 100 });
        b.addKernel(gpu, 1000, 500, b.intern("k"), 1, KernelConfig());
        Trace t = b.finish();
        const std::string p = path("overhead.gapscope");
        QVERIFY(writeTraceFile(t, p, WriteOptions()).isOk());
        auto back = readTraceFile(p, ReadOptions());
        QVERIFY2(back.hasValue(), back.error().c_str());
        QCOMPARE(back->header().ranks.size(), size_t(1));
        const RankInfo& r = back->header().ranks[0];
        QVERIFY(r.hasOverhead);
        QCOMPARE(r.overhead.stepsBefore, 61u);
        QCOMPARE(r.overhead.stepMsMedianBefore, 2.21);
        QCOMPARE(r.overhead.stepsDuring, 20u);
        QCOMPARE(r.overhead.stepMsMedianDuring, 2.31);
        QCOMPARE(r.overhead.armLatencyMs, 4.5);
        QCOMPARE(r.overhead.disarmLatencyMs, 0.75);
        QCOMPARE(r.overhead.baselineSteps, 200u);
        QCOMPARE(r.overhead.stepMsMedianBaseline, 2.17);
        QCOMPARE(r.overhead.baselineCapturesBefore, 1u);
        QCOMPARE(r.overhead.capturesBefore, 2u);
        QVERIFY(r.overhead.cuptiAfterLast == OverheadEvidence::CuptiAfterLast::StillAttached);
        const std::string diff = test::compareTraces(t, *back);
        QVERIFY2(diff.empty(), diff.c_str());
    }

    void truncatedAtEveryFrameBoundary()
    {
        Trace full;
        const std::string p = writeSmall("cut.gapscope", &full);
        const std::string bytes = readAll(p);
        auto reader = format::TraceReader::open(p);
        QVERIFY(reader.hasValue());
        uint64_t eventsBefore = 0;
        int cuts = 0;
        for (const auto& f : (*reader)->frames()) {
            // Cut right before this frame: every frame before it is whole.
            auto t = readTraceBuffer(bytes.substr(0, f.offset), "cut", {});
            QVERIFY2(t.hasValue(), t.hasValue() ? "" : t.error().c_str());
            QCOMPARE(t->eventCount(), eventsBefore);
            QVERIFY(!t->warnings().empty());
            // Cut inside this frame: its events are reported missing.
            auto mid = readTraceBuffer(bytes.substr(0, f.offset + 40), "cut", {});
            QVERIFY(mid.hasValue());
            QCOMPARE(mid->eventCount(), eventsBefore);
            QCOMPARE(counter(*mid, "read_truncated_events"), uint64_t(f.header.events));
            QVERIFY(counter(*mid, "read_truncated_bytes") > 0);
            if (f.header.type == uint8_t(format::FrameType::Chunk))
                eventsBefore += f.header.events;
            ++cuts;
        }
        QVERIFY(cuts > 10);
        QCOMPARE(eventsBefore, full.eventCount());
    }

    void truncatedAtRandomOffsets()
    {
        Trace full;
        const std::string bytes = readAll(writeSmall("rand.gapscope", &full));
        std::mt19937 rng(3);
        for (int i = 0; i < 200; ++i) {
            const size_t n = rng() % bytes.size();
            auto t = readTraceBuffer(bytes.substr(0, n), "cut", {});
            if (n < format::kFileHeaderSize) {
                QVERIFY(!t.hasValue());
                continue;
            }
            QVERIFY2(t.hasValue(), t.error().c_str());
            QVERIFY(t->eventCount() <= full.eventCount());
            QVERIFY(!t->warnings().empty());
        }
    }

    void flippedPayloadByteSkipsOneChunk()
    {
        Trace full;
        const std::string p = writeSmall("flip.gapscope", &full);
        std::string bytes = readAll(p);
        auto reader = format::TraceReader::open(p);
        const format::FrameInfo* chunk = nullptr;
        for (const auto& f : (*reader)->frames())
            if (f.header.type == uint8_t(format::FrameType::Chunk) && !chunk && f.offset > 200)
                chunk = &f;
        QVERIFY(chunk);
        bytes[chunk->offset + format::kFrameHeaderSize + 3] ^= 0x40;
        auto t = readTraceBuffer(bytes, "flip", {});
        QVERIFY(t.hasValue());
        QCOMPARE(t->eventCount(), full.eventCount() - chunk->header.events);
        QCOMPARE(counter(*t, "read_frames_skipped"), uint64_t(1));
        bool named = false;
        std::string all;
        for (const auto& w : t->warnings()) {
            named = named
                || (w.find("offset " + std::to_string(chunk->offset)) != std::string::npos
                    && w.find("checksum") != std::string::npos);
            all += w + "\n";
        }
        QVERIFY2(named, all.c_str());
    }

    void flippedBytes_data()
    {
        QTest::addColumn<int>("where"); // 0 magic, 1 frame header, 2 footer, 3 index payload
        QTest::addColumn<bool>("opens");
        QTest::newRow("magic") << 0 << false;
        QTest::newRow("frame header") << 1 << true;
        QTest::newRow("footer") << 2 << true;
        QTest::newRow("index payload") << 3 << true;
    }
    void flippedBytes()
    {
        QFETCH(int, where);
        QFETCH(bool, opens);
        Trace full;
        const std::string p = writeSmall("flip2.gapscope", &full);
        std::string bytes = readAll(p);
        auto reader = format::TraceReader::open(p);
        const auto& frames = (*reader)->frames();
        size_t at = 0;
        if (where == 0)
            at = 2;
        else if (where == 1)
            at = frames[frames.size() / 2].offset + 9;
        else if (where == 2)
            at = bytes.size() - 20;
        else
            at = bytes.size() - format::kFooterSize - 5;
        bytes[at] ^= 0x11;
        format::FormatError kind = format::FormatError::None;
        ReadOptions ro;
        ro.error = &kind;
        auto t = readTraceBuffer(bytes, "flip2", ro);
        QCOMPARE(t.hasValue(), opens);
        if (!opens) {
            QCOMPARE(kind, format::FormatError::NotATrace);
            QVERIFY(t.error().find("offset 0") != std::string::npos);
            return;
        }
        QVERIFY(!t->warnings().empty());
        if (where >= 2) // footer/index damage loses nothing: frames are read in order
            QCOMPARE(t->eventCount(), full.eventCount());
        else
            QVERIFY(t->eventCount() < full.eventCount());
    }

    void anyChunkDecodesAloneThroughTheIndex()
    {
        Trace full;
        const std::string p = writeSmall("random.gapscope", &full);
        auto reader = format::TraceReader::open(p);
        QVERIFY((*reader)->hasIndex());
        format::ChunkDecoder decoder;
        decoder.load((*reader)->index());
        const LaneEvents& ev = full.lane(0).events;
        size_t pick = ev.size() / 2;
        while (full.kindOf(0, pick) != EventKind::Kernel)
            ++pick;
        const TimeNs t0 = ev.start(pick), t1 = t0 + 1;
        auto chunks = (*reader)->chunksOverlapping(t0, t1);
        QVERIFY(!chunks.empty());
        QVERIFY((*reader)->chunksOverlapping(full.endTime() + 1, full.endTime() + 2).empty());
        // Decode the last of them alone (no chunk before it read): ids resolve, the event is there.
        struct Find : format::ChunkDecoder::Visitor {
            TimeNs want;
            std::string name;
            const format::ChunkDecoder* d;
            void kernel(
                uint32_t lane, int64_t start, uint64_t, uint32_t n, uint32_t, uint32_t, uint64_t, uint64_t) override
            {
                const pb::LaneDef* def = d->laneDef(lane);
                if (start == want && def->rank() == 0 && def->stream() == 7)
                    name = d->string(n);
            }
        } find;
        find.want = t0;
        find.d = &decoder;
        format::ZstdDecompressor zstd;
        std::string raw;
        for (const auto* f : chunks) {
            pb::Chunk c;
            QVERIFY((*reader)->readMessage(*f, zstd, raw, c).isOk());
            QVERIFY(decoder.validate(c).isOk());
            decoder.forEach(c, find);
        }
        QCOMPARE(find.name, std::string(full.str(ev.name(pick))));
    }

    void newerMajorVersionIsRejected()
    {
        std::string bytes = readAll(writeSmall("v2.gapscope"));
        bytes[8] = 2;
        format::FormatError kind = format::FormatError::None;
        ReadOptions ro;
        ro.error = &kind;
        auto t = readTraceBuffer(bytes, "v2", ro);
        QVERIFY(!t.hasValue());
        QCOMPARE(kind, format::FormatError::UnsupportedVersion);
        QVERIFY(t.error().find("newer") != std::string::npos);
    }

    void garbageIsNotATrace_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::newRow("empty") << QByteArray();
        QTest::newRow("json") << QByteArray("{\"traceEvents\": []}");
        QTest::newRow("zeros") << QByteArray(4096, '\0');
    }
    void garbageIsNotATrace()
    {
        QFETCH(QByteArray, bytes);
        format::FormatError kind = format::FormatError::None;
        ReadOptions ro;
        ro.error = &kind;
        auto t = readTraceBuffer(bytes.toStdString(), "garbage", ro);
        QVERIFY(!t.hasValue());
        QCOMPARE(kind, format::FormatError::NotATrace);
    }

    void unknownFrameTypeAndFieldsAreSkippedWithANote()
    {
        pb::FileHeader h;
        h.set_source("future");
        const std::string p = path("future.gapscope");
        {
            auto w = format::TraceWriter::create(p, h);
            QVERIFY(w.hasValue());
            auto& e = (*w)->encoder();
            pb::LaneDef def;
            def.set_kind(pb::LANE_GPU_STREAM);
            def.set_stream(7);
            const uint32_t lane = e.lane(def);
            for (int i = 0; i < 10; ++i)
                e.addKernel(lane, 1000 + i * 100, 50, e.internString("k"), 0, 0);
            QVERIFY((*w)->flush().isOk());
            QVERIFY((*w)->writeRawFrame(99, "payload of a frame type from the future").isOk());
            // A chunk with a field this build does not know (field 1000, varint 5).
            pb::Chunk c;
            c.set_sequence(1);
            e.addKernel(lane, 5000, 50, e.internString("k"), 0, 0);
            e.flush(c);
            std::string raw = c.SerializeAsString();
            raw += std::string("\xc0\x3e\x05", 3);
            QVERIFY((*w)->writeRawFrame(uint8_t(format::FrameType::Chunk), raw, 1).isOk());
            QVERIFY((*w)->finish().isOk());
        }
        auto t = readTraceFile(p);
        QVERIFY2(t.hasValue(), t.hasValue() ? "" : t.error().c_str());
        QCOMPARE(t->eventCount(), uint64_t(11));
        bool frameNote = false, fieldNote = false;
        for (const auto& w : t->warnings()) {
            frameNote = frameNote || w.find("unknown type 99") != std::string::npos;
            fieldNote = fieldNote || w.find("fields this build does not know") != std::string::npos;
        }
        QVERIFY(frameNote);
        QVERIFY(fieldNote);
        QCOMPARE(counter(*t, "read_frames_skipped"), uint64_t(0));
    }

    void absurdLengthIsDamageNotAnAllocation()
    {
        std::string bytes = readAll(writeSmall("absurd.gapscope"));
        auto reader = format::TraceReader::fromBuffer(bytes, "absurd");
        const auto& f = (*reader)->frames()[1];
        // Stored length 0x7fffffff with a recomputed header checksum: the frame claims to run past the end.
        uint8_t h[format::kFrameHeaderSize];
        std::memcpy(h, bytes.data() + f.offset, sizeof h);
        format::FrameHeader fh;
        QVERIFY(format::decodeFrameHeader(h, fh));
        fh.storedBytes = 0x7fffffff;
        fh.rawBytes = 0x7fffffff;
        format::encodeFrameHeader(fh, h);
        std::string damaged = bytes;
        damaged.replace(f.offset, sizeof h, reinterpret_cast<const char*>(h), sizeof h);
        auto t = readTraceBuffer(damaged, "absurd", {});
        QVERIFY(t.hasValue());
        QVERIFY(!t->warnings().empty());
    }

    void sectionsAreRewrittenInPlace()
    {
        Trace full;
        const std::string p = writeSmall("sections.gapscope", &full);
        AnnotationSet a;
        a.notes.resize(1);
        a.notes[0].id = 42;
        a.notes[0].text = "new note";
        a.stepRule = "engine"; // the viewer's Steps menu choice, saved with the notes
        BudgetSettings b;
        b.model = "deepseek-v3";
        QVERIFY(saveTraceSections(p, &a, &b, nullptr).isOk());
        auto t = readTraceFile(p);
        QVERIFY(t.hasValue());
        QCOMPARE(t->annotations().notes.size(), size_t(1));
        QCOMPARE(t->annotations().notes[0].text, std::string("new note"));
        QCOMPARE(t->annotations().stepRule, std::string("engine"));
        auto reader = format::TraceReader::open(p);
        QVERIFY(reader);
        QCOMPARE(readAnnotations(**reader).stepRule, std::string("engine")); // without the events
        QCOMPARE(savedStepRule(**reader), std::string("engine"));
        // openTrace finds the steps by the saved rule, unless another is asked for.
        auto opened = openTrace({ p });
        QVERIFY(opened);
        QCOMPARE(opened->stepReport().rule, std::string("engine"));
        ReadOptions asked;
        asked.stepRule = "file";
        auto openedAsked = openTrace({ p }, asked);
        QVERIFY(openedAsked);
        QCOMPARE(openedAsked->stepReport().rule, std::string("file"));
        QCOMPARE(t->budgetSettings()->model, std::string("deepseek-v3"));
        QCOMPARE(t->classifierTable()->rules[0].pattern, std::string("nccl")); // kept
        QCOMPARE(t->eventCount(), full.eventCount());
        QVERIFY(t->warnings().empty());
        // Through the fast (indexed, parallel) path: same events as before.
        full.mutableAnnotations() = a;
        full.setBudgetSettings(b);
        const std::string diff = test::compareTraces(full, *t);
        QVERIFY2(diff.empty(), diff.c_str());
    }

    void saveSectionsFailsCleanlyWhenReadOnly()
    {
        const std::string p = writeSmall("ro.gapscope");
        const std::string before = readAll(p);
        const auto readOnly = QFileDevice::ReadOwner | QFileDevice::ReadGroup | QFileDevice::ReadOther;
        QFile::setPermissions(QString::fromStdString(p), readOnly);
        QFile::setPermissions(m_dir.path(), readOnly | QFileDevice::ExeOwner | QFileDevice::WriteOwner
                | QFileDevice::ExeGroup | QFileDevice::ExeOther); // others may reach the file, not write here
        AnnotationSet a;
        {
            test::Unprivileged user; // root ignores file permissions
            if (!user.ok())
                QSKIP("running as root without the right to switch users: permissions cannot be tested");
            QVERIFY(!saveTraceSections(p, &a, nullptr, nullptr).isOk());
        }
        QCOMPARE(readAll(p), before);
    }

    void progressAndCancel()
    {
        const std::string p = writeSmall("progress.gapscope");
        std::vector<double> seen;
        ReadOptions ro;
        ro.progress = [&seen](double f) {
            seen.push_back(f);
            return true;
        };
        QVERIFY(readTraceFile(p, ro).hasValue());
        QVERIFY(!seen.empty());
        QCOMPARE(seen.back(), 1.0);
        ro.progress = [](double) { return false; };
        auto t = readTraceFile(p, ro);
        QVERIFY(!t.hasValue());
        QVERIFY(t.error().find("cancelled") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestTraceFile)
#include "tst_tracefile.moc"
