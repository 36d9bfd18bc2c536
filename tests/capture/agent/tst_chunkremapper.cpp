// SPDX-License-Identifier: MIT
// ChunkRemapper: several streams with their own dictionaries merge into one; times, ranks and step
// indices are rewritten as asked; malformed chunks are rejected with a message naming the problem.
#include "capture/client/chunkremapper.h"
#include "capture/client/encodersink.h"
#include "model/format/chunkdecoder.h"

#include <QtTest>

using namespace gapscope;
using namespace gapscope::capture;

namespace {

struct Event {
    std::string lane, name;
    uint32_t rank;
    int64_t start;
    uint64_t dur;
    bool operator<(const Event& o) const { return std::tie(lane, start, name) < std::tie(o.lane, o.start, o.name); }
};

// Decodes a whole stream of chunks into readable events (names and lanes resolved).
struct Collect : format::ChunkDecoder::Visitor {
    const format::ChunkDecoder* dec = nullptr;
    std::vector<Event> events;
    std::vector<std::tuple<uint32_t, uint32_t, int64_t>> steps;
    void kernel(
        uint32_t lane, int64_t start, uint64_t dur, uint32_t name, uint32_t, uint32_t, uint64_t, uint64_t) override
    {
        const auto* l = dec->laneDef(lane);
        events.push_back({ l->host() + "/" + l->name(), dec->string(name), l->rank(), start, dur });
    }
    void step(uint32_t rank, uint32_t index, int64_t start, uint64_t, pb::StepSource) override
    {
        steps.emplace_back(rank, index, start);
    }
};

pb::LaneDef gpuLane(uint32_t rank, uint64_t stream)
{
    pb::LaneDef l;
    l.set_kind(pb::LANE_GPU_STREAM);
    l.set_rank(rank);
    l.set_stream(stream);
    l.set_name("stream " + std::to_string(stream));
    return l;
}

} // namespace

// Chunks of format 1.0 did not repeat the dictionary entries of earlier chunks (lanes, configs and
// strings their events reuse); since 1.1 the encoder does. Stripping them makes a 1.0 chunk, whose
// gaps the remapper must still bridge.
static void stripRepeatedDictionary(pb::Chunk& c)
{
    c.clear_lanes();
    c.clear_reused_string_ids();
    c.clear_reused_strings();
}

class TestChunkRemapper : public QObject {
    Q_OBJECT
private slots:
    void mergesTwoStreamsIntoOneDictionary()
    {
        // Two sources intern the same names in a different order.
        format::ChunkEncoder a, b;
        const uint32_t la = a.lane(gpuLane(0, 7));
        const uint32_t a1 = a.internString("gemm"), a2 = a.internString("allreduce");
        a.addKernel(la, 1000, 10, a1, 1, 0);
        a.addKernel(la, 2000, 10, a2, 2, 0);
        a.addStep(0, 5, 900, 2000, pb::STEP_NVTX);
        const uint32_t lb = b.lane(gpuLane(0, 7));
        const uint32_t b1 = b.internString("allreduce"), b2 = b.internString("gemm");
        b.addKernel(lb, 1500, 20, b1, 1, 0);
        b.addKernel(lb, 2500, 20, b2, 2, 0);
        pb::Chunk ca, cb;
        a.flush(ca);
        b.flush(cb);

        format::ChunkEncoder target;
        RemapOptions ra;
        ra.rank = 0;
        ra.host = "hostA";
        ra.stepIndexShift = -5;
        RemapOptions rb;
        rb.rank = 1;
        rb.host = "hostB";
        rb.timeShiftNs = 100;
        ChunkRemapper ma(target, ra), mb(target, rb);
        EncoderSink sink(target);
        QVERIFY(ma.apply(ca, sink).isOk());
        QVERIFY(mb.apply(cb, sink).isOk());
        QCOMPARE(sink.events(), uint64_t(4));
        pb::Chunk out;
        target.flush(out);
        QCOMPARE(out.strings_size(), 2); // "gemm" and "allreduce" once each
        QCOMPARE(out.lanes_size(), 2); // same stream id on two hosts: two lanes

        format::ChunkDecoder dec;
        QVERIFY(dec.absorb(out).isOk());
        QVERIFY(dec.validate(out).isOk());
        Collect c;
        c.dec = &dec;
        dec.forEach(out, c);
        std::sort(c.events.begin(), c.events.end());
        QCOMPARE(int(c.events.size()), 4);
        QCOMPARE(QString::fromStdString(c.events[0].lane), QString("hostA/stream 7"));
        QCOMPARE(QString::fromStdString(c.events[0].name), QString("gemm"));
        QCOMPARE(c.events[0].start, int64_t(1000));
        QCOMPARE(c.events[1].name, std::string("allreduce"));
        QCOMPARE(c.events[2].lane, std::string("hostB/stream 7"));
        QCOMPARE(c.events[2].name, std::string("allreduce"));
        QCOMPARE(c.events[2].start, int64_t(1600)); // shifted by 100 ns
        QCOMPARE(c.events[2].rank, 1u); // rank overridden
        QCOMPARE(c.events[3].name, std::string("gemm"));
        QCOMPARE(int(c.steps.size()), 1);
        QCOMPARE(std::get<1>(c.steps[0]), 0u); // local step 5 -> capture step 0
    }

    void continuesAcrossChunks()
    {
        format::ChunkEncoder src, target;
        const uint32_t l = src.lane(gpuLane(0, 1));
        pb::Chunk c1, c2;
        src.addKernel(l, 10, 1, src.internString("k1"), 0, 0);
        src.flush(c1);
        src.addKernel(l, 20, 1, src.internString("k2"), 0, 0); // defines a new string in chunk 2
        src.addKernel(l, 30, 1, src.internString("k1"), 0, 0);
        src.flush(c2);
        ChunkRemapper m(target);
        EncoderSink sink(target);
        QVERIFY(m.apply(c1, sink).isOk());
        QVERIFY(m.apply(c2, sink).isOk());
        QCOMPARE(sink.events(), uint64_t(3));
        QCOMPARE(int(target.strings().size()), 2);
        QCOMPARE(ChunkRemapper::eventCount(c2), uint64_t(2));
    }

    void dictionaryGapKeepsGoing()
    {
        // A lost chunk leaves ids undefined: placeholders stand in, the stream goes on, and it is noted.
        format::ChunkEncoder src, target;
        const uint32_t l = src.lane(gpuLane(0, 1));
        pb::Chunk lost, next;
        src.addKernel(l, 10, 1, src.internString("k1"), 0, 0);
        src.flush(lost);
        src.addKernel(l, 20, 1, src.internString("k2"), 0, 0);
        src.addKernel(l, 30, 1, src.internString("k1"), 0, 0);
        src.flush(next);
        stripRepeatedDictionary(next); // as a chunk of format 1.0 came, with nothing of `lost` repeated
        next.add_lanes()->CopyFrom(lost.lanes(0)); // the lane came with the lost chunk; resent here
        ChunkRemapper m(target);
        EncoderSink sink(target);
        QVERIFY(m.apply(next, sink).isOk());
        QCOMPARE(sink.events(), uint64_t(2));
        QVERIFY(!m.notes().empty());
        QVERIFY(QString::fromStdString(m.notes()[0]).contains("missing"));
        QCOMPARE(target.strings()[0], std::string("<string 1 lost>"));
    }

    void laneOfAFailedChunkIsMappedLater()
    {
        // A chunk whose lanes were absorbed before its dictionaries failed (a config id of 0) is
        // rejected; the next chunk's events on those lanes must still land on real target lanes.
        format::ChunkEncoder src, target;
        const uint32_t l = src.lane(gpuLane(0, 3));
        src.addKernel(l, 10, 1, src.internString("k"), 0, 0);
        pb::Chunk bad, next;
        src.flush(bad);
        pb::LaunchConfig* cfg = bad.add_configs();
        cfg->set_id(0); // out of range: absorb fails after taking the lanes
        src.addKernel(l, 20, 1, src.internString("k"), 0, 0); // string and lane defined in `bad` only
        src.flush(next);
        stripRepeatedDictionary(next); // format 1.0: the lane and string of `bad` not repeated
        QCOMPARE(next.lanes_size(), 0);
        QCOMPARE(next.strings_size(), 0);
        ChunkRemapper m(target);
        EncoderSink sink(target);
        QVERIFY(!m.apply(bad, sink).isOk());
        QVERIFY(m.apply(next, sink).isOk());
        QCOMPARE(sink.events(), uint64_t(1));
        pb::Chunk out;
        target.flush(out);
        format::ChunkDecoder dec;
        QVERIFY(dec.absorb(out).isOk());
        QVERIFY2(dec.validate(out).isOk(), dec.validate(out).message().c_str());
        QCOMPARE(out.lanes_size(), 1);
        QCOMPARE(out.lanes(0).stream(), uint64_t(3));
        Collect c;
        c.dec = &dec;
        dec.forEach(out, c);
        QCOMPARE(int(c.events.size()), 1);
        QCOMPARE(c.events[0].name, std::string("k")); // the string of the failed chunk, interned late
        QCOMPARE(c.events[0].start, int64_t(20));
    }

    void rejectsMalformed_data()
    {
        QTest::addColumn<int>("damage");
        QTest::addColumn<QString>("expected");
        QTest::newRow("undefined lane") << 0 << "chunk 0: kernels: lane id 9 not defined";
        QTest::newRow("undefined string") << 1 << "string id 77 not defined";
        QTest::newRow("short column") << 2 << "column lengths differ";
        QTest::newRow("undefined config") << 4 << "launch config id 5 not defined";
        QTest::newRow("uneven steps") << 5 << "steps: bad columns";
    }
    void rejectsMalformed()
    {
        QFETCH(int, damage);
        QFETCH(QString, expected);
        format::ChunkEncoder src, target;
        const uint32_t l = src.lane(gpuLane(0, 1));
        src.addKernel(l, 10, 1, src.internString("k"), 0, 0);
        src.addStep(0, 0, 10, 5, pb::STEP_NVTX);
        pb::Chunk c;
        src.flush(c);
        auto* cols = c.mutable_kernels()->mutable_c();
        switch (damage) {
        case 0:
            cols->set_lane(0, 9);
            break;
        case 1:
            cols->set_name(0, 77);
            break;
        case 2:
            cols->add_lane(l);
            break;
        case 4:
            c.mutable_kernels()->clear_config();
            c.mutable_kernels()->add_config(5);
            break;
        case 5:
            c.mutable_steps()->add_duration(3);
            c.mutable_steps()->add_duration(4);
            break;
        }
        ChunkRemapper m(target);
        EncoderSink sink(target);
        const Status s = m.apply(c, sink);
        QVERIFY(!s.isOk());
        QVERIFY2(QString::fromStdString(s.message()).contains(expected), s.message().c_str());
        QCOMPARE(sink.events(), uint64_t(0)); // nothing forwarded from a bad chunk
    }
};

QTEST_GUILESS_MAIN(TestChunkRemapper)
#include "tst_chunkremapper.moc"
