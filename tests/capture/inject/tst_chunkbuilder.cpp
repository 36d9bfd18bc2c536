// SPDX-License-Identifier: MIT
// Records -> one ChunkEncoder stream -> ChunkDecoder: values, lanes, names, pairing.
#include "capture/inject/chunkbuilder.h"
#include "capture/inject/graphnodes.h"
#include "model/format/chunkdecoder.h"

#include <QtTest>
#include <cstring>

using namespace gapscope;
using namespace gapscope::capture::inject;

namespace {

struct Seen : format::ChunkDecoder::Visitor {
    const format::ChunkDecoder& d;
    explicit Seen(const format::ChunkDecoder& dec)
        : d(dec)
    {
    }
    std::vector<std::string> kernels, apis, nvtxNames, collectives;
    std::vector<uint64_t> kernelGraphNodes, nvtxDur, collectiveBytes;
    std::vector<uint32_t> syncLanes, apiLanes, kernelConfigs;
    std::vector<uint32_t> steps;
    uint64_t memopBytes = 0;
    void kernel(uint32_t, int64_t, uint64_t, uint32_t name, uint32_t, uint32_t config, uint64_t, uint64_t node) override
    {
        kernels.push_back(d.string(name));
        kernelGraphNodes.push_back(node);
        kernelConfigs.push_back(config);
    }
    void memop(uint32_t, int64_t, uint64_t, pb::MemopKind, pb::CopyKind, uint64_t bytes, uint32_t, uint32_t) override
    {
        memopBytes += bytes;
    }
    void api(uint32_t lane, int64_t, uint64_t, uint32_t name, uint32_t, pb::ApiKind) override
    {
        apis.push_back(d.string(name));
        apiLanes.push_back(lane);
    }
    void sync(uint32_t lane, int64_t, uint64_t, pb::SyncKind, uint64_t, uint32_t) override
    {
        syncLanes.push_back(lane);
    }
    void nvtx(uint32_t, int64_t, uint64_t dur, uint32_t name, uint32_t, uint32_t) override
    {
        nvtxNames.push_back(d.string(name));
        nvtxDur.push_back(dur);
    }
    void collective(uint32_t, int64_t, uint64_t, uint32_t op, uint64_t bytes, uint32_t dt, uint32_t algo,
        uint32_t proto, uint64_t seq, uint64_t, uint32_t, uint32_t) override
    {
        collectives.push_back(d.string(op) + "/" + d.string(dt) + "/" + d.string(algo) + "/" + d.string(proto) + "/"
            + std::to_string(seq));
        collectiveBytes.push_back(bytes);
    }
    void step(uint32_t, uint32_t index, int64_t, uint64_t, pb::StepSource) override { steps.push_back(index); }
};

NvtxRecord nvtxRec(NvtxOp op, int64_t t, uint32_t tid, const char* name = "")
{
    NvtxRecord r;
    r.op = op;
    r.time = t;
    r.tid = tid;
    std::strncpy(r.name, name, sizeof(r.name) - 1);
    return r;
}

} // namespace

class TstChunkBuilder : public QObject {
    Q_OBJECT
private slots:
    void launchConfigsDifferInAnyField()
    {
        ChunkBuilder b({ 0, "h", 1 }, {});
        GpuRecord k;
        k.kind = GpuRecordKind::Kernel;
        k.end = 10;
        k.name = "_Z1kv";
        k.grid[0] = 132;
        k.block[0] = 256;
        k.registers = 32;
        b.addGpu(k); // config A
        GpuRecord dyn = k;
        dyn.sharedDynamic = 4096; // differs in the last field only
        b.addGpu(dyn);
        GpuRecord gy = k;
        gy.grid[1] = 2; // and in a middle one
        b.addGpu(gy);
        b.addGpu(k); // config A again
        pb::Chunk chunk;
        b.flush(chunk);
        format::ChunkDecoder d;
        QVERIFY(d.absorb(chunk));
        Seen seen(d);
        d.forEach(chunk, seen);
        QCOMPARE(seen.kernelConfigs.size(), size_t(4));
        std::vector<uint32_t> ids = seen.kernelConfigs;
        std::sort(ids.begin(), ids.end());
        QCOMPARE(std::unique(ids.begin(), ids.end()) - ids.begin(), 3L);
        QCOMPARE(chunk.configs_size(), 3);
        for (uint32_t id : seen.kernelConfigs)
            QVERIFY(d.config(id));
    }

    void roundTrip()
    {
        ChunkBuilder b({ 1, "hostA", 4242 }, [](uint8_t domain, uint32_t cbid) {
            return std::string(
                domain ? "cuLaunchKernel" : (cbid == 131 ? "cudaStreamSynchronize" : "cudaLaunchKernel"));
        });
        GpuRecord k;
        k.kind = GpuRecordKind::Kernel;
        k.start = 1000;
        k.end = 2000;
        k.stream = 7;
        k.name = "_Z4gemvPKfPf";
        k.grid[0] = 132;
        k.block[0] = 256;
        k.graphNodeId = 5;
        b.addGpu(k);
        GpuRecord k2 = k;
        k2.start = 3000;
        k2.end = 3500;
        k2.graphNodeId = 6;
        b.addGpu(k2);
        GpuRecord m;
        m.kind = GpuRecordKind::Memcpy;
        m.bytes = 4096;
        m.start = 100;
        m.end = 200;
        b.addGpu(m);
        // The sync record comes before its API record; it must still land on that thread's lane.
        GpuRecord s;
        s.kind = GpuRecordKind::Sync;
        s.syncKind = 3;
        s.correlation = 77;
        s.start = 400;
        s.end = 900;
        b.addGpu(s);
        GpuRecord a;
        a.kind = GpuRecordKind::Api;
        a.cbid = 131;
        a.correlation = 77;
        a.stream = 999; // thread id
        a.start = 390;
        a.end = 910;
        b.addGpu(a);
        b.addNvtx(nvtxRec(NvtxOp::Push, 10, 999, "decode_step"));
        b.addNvtx(nvtxRec(NvtxOp::Push, 20, 999, "attention"));
        b.addNvtx(nvtxRec(NvtxOp::Pop, 30, 999));
        b.addNvtx(nvtxRec(NvtxOp::Pop, 60, 999));
        b.addNvtx(nvtxRec(NvtxOp::Pop, 70, 999)); // unpaired
        CollectiveRecord c;
        c.start = 500;
        c.end = 600;
        c.func = "AllReduce";
        c.datatype = "ncclBfloat16";
        c.algorithm = "Ring";
        c.protocol = "LL";
        c.count = 1024;
        c.sequence = 17;
        b.addCollective(c);
        b.addStep(12, 1000, 5000, pb::STEP_GRAPH);
        QCOMPARE(b.nvtxUnpaired(), uint64_t(1));

        pb::Chunk chunk;
        b.flush(chunk);
        QCOMPARE(chunk.source_rank(), 1u);
        format::ChunkDecoder d;
        QVERIFY(d.absorb(chunk));
        QVERIFY(d.validate(chunk));
        Seen seen(d);
        d.forEach(chunk, seen);
        QCOMPARE(seen.kernels.size(), size_t(2));
        QCOMPARE(seen.kernels[0], std::string("gemv(float const*, float*)"));
        QCOMPARE(seen.kernelGraphNodes[1], uint64_t(6));
        QCOMPARE(seen.kernelConfigs[0], seen.kernelConfigs[1]); // one launch config, interned once
        const pb::LaunchConfig* cfg = d.config(seen.kernelConfigs[0]);
        QVERIFY(cfg);
        QCOMPARE(cfg->grid_x(), 132u);
        QCOMPARE(seen.memopBytes, uint64_t(4096));
        QCOMPARE(seen.apis, std::vector<std::string>({ "cudaStreamSynchronize" }));
        QCOMPARE(seen.syncLanes.size(), size_t(1));
        QCOMPARE(seen.syncLanes[0], seen.apiLanes[0]);
        const pb::LaneDef* lane = d.laneDef(seen.apiLanes[0]);
        QCOMPARE(lane->kind(), pb::LANE_CPU_API);
        QCOMPARE(lane->stream(), uint64_t(999));
        QCOMPARE(lane->rank(), 1u);
        QCOMPARE(lane->host(), std::string("hostA"));
        QCOMPARE(seen.nvtxNames.size(), size_t(2));
        QVERIFY(std::find(seen.nvtxNames.begin(), seen.nvtxNames.end(), "decode_step") != seen.nvtxNames.end());
        QVERIFY(std::find(seen.nvtxDur.begin(), seen.nvtxDur.end(), uint64_t(50)) != seen.nvtxDur.end());
        QCOMPARE(seen.collectives, std::vector<std::string>({ "AllReduce/ncclBfloat16/Ring/LL/17" }));
        QCOMPARE(seen.collectiveBytes[0], uint64_t(2048));
        QCOMPARE(seen.steps, std::vector<uint32_t>({ 12 }));
    }

    // A replayed kernel's node goes into the chunk with where it was built: the created node's ranges,
    // thread, call ("stream capture") and type; its instantiated copy keeps them (the copy's own call only
    // where the original's build was not seen); a node whose build was not seen is counted.
    void graphNodesCarryTheirBuild()
    {
        GraphNodeRegistry& reg = GraphNodeRegistry::instance();
        reg.clear();
        reg.recordCreated(5, 3, 4242, { "decode", "layer 0", "mlp" }, "stream capture", 1);
        reg.recordCloned(6, 5, 9, "cudaGraphInstantiate", 1);
        reg.recordCloned(8, 77, 9, "cudaGraphInstantiate", 3); // the original's build not seen
        ChunkBuilder b({ 1, "hostA", 4242 }, [](uint8_t, uint32_t) { return std::string("cudaLaunchKernel"); });
        GpuRecord k;
        k.kind = GpuRecordKind::Kernel;
        k.start = 1000;
        k.end = 2000;
        k.stream = 7;
        k.name = "gemv";
        k.graphId = 9;
        for (uint64_t node : { 6, 6, 8, 12 }) {
            k.graphNodeId = node;
            b.addGpu(k);
            k.start += 2000;
            k.end += 2000;
        }
        pb::Chunk chunk;
        b.flush(chunk);
        QCOMPARE(chunk.graph_nodes_size(), 2); // 6 and 8 once each; 12 not seen
        const pb::GraphNode& copy = chunk.graph_nodes(0);
        QCOMPARE(copy.node_id(), uint64_t(6));
        QCOMPARE(copy.original_node_id(), uint64_t(5));
        QCOMPARE(copy.graph_id(), uint64_t(9));
        QCOMPARE(copy.thread_id(), 4242u);
        QCOMPARE(copy.ranges_size(), 3);
        QCOMPARE(copy.ranges(2), std::string("mlp"));
        QCOMPARE(copy.api(), std::string("stream capture"));
        QCOMPARE(copy.node_type(), 1u);
        const pb::GraphNode& unseen = chunk.graph_nodes(1);
        QCOMPARE(unseen.node_id(), uint64_t(8));
        QCOMPARE(unseen.ranges_size(), 0);
        QCOMPARE(unseen.api(), std::string("cudaGraphInstantiate"));
        QCOMPARE(unseen.node_type(), 3u);
        reg.clear();
    }

    void datatypeBytes_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<uint>("bytes");
        QTest::newRow("ncclBfloat16") << "ncclBfloat16" << 2u;
        QTest::newRow("ncclFloat32") << "ncclFloat32" << 4u;
        QTest::newRow("ncclInt8") << "ncclInt8" << 1u;
        QTest::newRow("ncclFloat8e4m3") << "ncclFloat8e4m3" << 1u;
        QTest::newRow("ncclFloat64") << "ncclFloat64" << 8u;
        QTest::newRow("bf16") << "bf16" << 2u;
        QTest::newRow("unknown") << "ncclWeird" << 0u;
    }
    void datatypeBytes()
    {
        QFETCH(QString, name);
        QFETCH(uint, bytes);
        QCOMPARE(ChunkBuilder::datatypeBytes(name.toStdString().c_str()), bytes);
    }

    void namesAreDemangledOnce()
    {
        QCOMPARE(ChunkBuilder::demangle("_Z3fooi"), std::string("foo(int)"));
        QCOMPARE(ChunkBuilder::demangle("not_mangled"), std::string("not_mangled"));
        QCOMPARE(ChunkBuilder::demangle(nullptr), std::string());
    }
};

QTEST_APPLESS_MAIN(TstChunkBuilder)
#include "tst_chunkbuilder.moc"
