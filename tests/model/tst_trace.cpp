// SPDX-License-Identifier: MIT
// The in-memory trace: building, typed access, launch correlation, live appends, memory per event,
// lane identity (host and pid included) through building, appending and a file round trip.
#include "model/io/tracefile.h"
#include "model/trace/trace.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace gapscope;
using namespace gapscope::model;

namespace {

struct Lanes {
    LaneId gpu, api, nvtx, coll;
};

Lanes makeLanes(TraceBuilder& b, uint32_t rank)
{
    return { b.lane({ LaneKind::GpuStream, rank, "h", rank, 7, "", 10 + rank }),
        b.lane({ LaneKind::CpuApi, rank, "h", rank, 99, "main", 10 + rank }),
        b.lane({ LaneKind::Nvtx, rank, "h", rank, 99, "", 10 + rank }),
        b.lane({ LaneKind::Collective, rank, "h", rank, 0, "nccl", 10 + rank }) };
}

} // namespace

class TestTrace : public QObject {
    Q_OBJECT
private slots:
    void kindsAndTypedAccess()
    {
        TraceBuilder b;
        Lanes l = makeLanes(b, 3);
        KernelConfig c;
        c.grid[0] = 132;
        c.block[0] = 256;
        c.graphId = 5;
        c.graphNodeId = 77;
        b.addKernel(l.gpu, 100, 10, b.intern("gemm"), 1, c);
        b.addMemop(l.gpu, 120, 5, { MemopKind::Memset, CopyKind::Unknown, 64, true }, 2);
        b.addApi(l.api, 90, 4, b.intern("cuLaunchKernel"), 1, ApiKind::Driver);
        b.addSync(l.api, 95, 30, { SyncKind::Context, 0 }, 3);
        b.addNvtx(l.nvtx, 80, 100, b.intern("decode step"), 2);
        CollectiveInfo ci { 4096, b.intern("bf16"), b.intern("Ring"), b.intern("LL"), 9, 1, 2, 0 };
        b.addCollective(l.coll, 110, 8, b.intern("AllReduce"), ci);
        Trace t = b.finish();
        QCOMPARE(t.eventCount(), uint64_t(6));
        QCOMPARE(t.eventCount(EventKind::Kernel), uint64_t(1));
        QCOMPARE(t.kindOf(l.gpu, 0), EventKind::Kernel);
        QCOMPARE(t.kindOf(l.gpu, 1), EventKind::Memset);
        QCOMPARE(t.kernelConfig(l.gpu, 0)->graphNodeId, uint64_t(77));
        QVERIFY(t.kernelConfig(l.gpu, 1) == nullptr);
        QCOMPARE(t.memop(l.gpu, 1)->bytes, uint64_t(64));
        QCOMPARE(t.apiKind(l.api, 0), ApiKind::Driver);
        QCOMPARE(t.sync(l.api, 1)->kind, SyncKind::Context);
        QCOMPARE(t.nvtxDepth(l.nvtx, 0), 2u);
        QCOMPARE(t.collective(l.coll, 0)->sequence, uint64_t(9));
        QCOMPARE(t.str(t.collective(l.coll, 0)->protocol), std::string_view("LL"));
        QCOMPARE(t.ranks(), std::vector<uint32_t> { 3 });
        QCOMPARE(t.lanesOf(3, LaneKind::GpuStream), std::vector<LaneId> { l.gpu });
        QCOMPARE(*t.findLane("r3/gpu/d3/7"), l.gpu);
        QCOMPARE(t.startTime(), TimeNs(80));
        QCOMPARE(t.endTime(), TimeNs(180));
        QVERIFY(t.findString("gemm").has_value());
        QVERIFY(!t.findString("nope").has_value());
    }

    // One config id per distinct KernelConfig: every field counts, graph ids included, and a config
    // seen again gets its first id (KernelConfigHash, the one hash the builder and importers share).
    void kernelConfigsDifferInEveryField()
    {
        KernelConfig base;
        base.grid[0] = 132;
        base.block[0] = 256;
        using Change = void (*)(KernelConfig&);
        const Change changes[] = { [](KernelConfig& c) { c.grid[0] = 64; }, [](KernelConfig& c) { c.grid[1] = 2; },
            [](KernelConfig& c) { c.grid[2] = 2; }, [](KernelConfig& c) { c.block[0] = 128; },
            [](KernelConfig& c) { c.block[1] = 2; }, [](KernelConfig& c) { c.block[2] = 2; },
            [](KernelConfig& c) { c.registers = 32; }, [](KernelConfig& c) { c.sharedStatic = 1024; },
            [](KernelConfig& c) { c.sharedDynamic = 4096; }, [](KernelConfig& c) { c.graphId = 5; },
            [](KernelConfig& c) { c.graphNodeId = 77; } };
        std::vector<KernelConfig> configs { base };
        for (Change change : changes) {
            configs.push_back(base);
            change(configs.back());
            QVERIFY(!(configs.back() == base));
        }
        KernelConfig again = base;
        QCOMPARE(hashOf(again), hashOf(base));
        QCOMPARE(KernelConfigHash()(again), hashOf(base));

        TraceBuilder b;
        const LaneId gpu = makeLanes(b, 0).gpu;
        for (size_t i = 0; i < configs.size(); ++i)
            b.addKernel(gpu, TimeNs(i) * 100, 10, b.intern("k"), uint32_t(i + 1), configs[i]);
        b.addKernel(gpu, TimeNs(configs.size()) * 100, 10, b.intern("k"), 99, again);
        Trace t = b.finish();
        QCOMPARE(t.kernelConfigs().size(), configs.size());
        for (size_t i = 0; i < configs.size(); ++i)
            QVERIFY(*t.kernelConfig(gpu, i) == configs[i]);
        QCOMPARE(t.kernelConfig(gpu, configs.size()), t.kernelConfig(gpu, 0));
    }

    // Lanes equal in kind, rank, device and stream but of two hosts (or two processes of one host)
    // are different lanes: building, appending and writing and reading a file keep them apart.
    void lanesOfTwoHostsStayApart()
    {
        const LaneInfo a { LaneKind::GpuStream, 0, "host-a", 0, 7, "", 100 };
        LaneInfo b = a, c = a;
        b.host = "host-b";
        c.pid = 200;
        TraceBuilder builder;
        const LaneId la = builder.lane(a), lb = builder.lane(b), lc = builder.lane(c);
        QCOMPARE(builder.lane(a), la);
        QVERIFY(la != lb && la != lc && lb != lc);
        builder.addKernel(la, 100, 10, builder.intern("ka"), 1, {});
        builder.addKernel(lb, 100, 20, builder.intern("kb"), 2, {});
        builder.addKernel(lb, 200, 20, builder.intern("kb"), 3, {});
        builder.addKernel(lc, 100, 30, builder.intern("kc"), 4, {});
        Trace t = builder.finish();
        QCOMPARE(t.laneCount(), size_t(3));

        Trace live;
        TraceBuilder more;
        more.addKernel(more.lane(b), 300, 5, more.intern("kb"), 5, {});
        more.addKernel(more.lane(a), 300, 5, more.intern("ka"), 6, {});
        live.appendFrom(more);
        QCOMPARE(live.laneCount(), size_t(2));

        QTemporaryDir dir;
        const std::string path = dir.filePath("hosts.gapscope").toStdString();
        QVERIFY(writeTraceFile(t, path));
        auto read = readTraceFile(path);
        QVERIFY2(read, read.error().c_str());
        QCOMPARE(read->laneCount(), size_t(3));
        std::map<std::pair<std::string, uint32_t>, size_t> events; // (host, pid) -> events
        for (const Lane& l : read->lanes())
            events[{ l.info.host, l.info.pid }] = l.events.size();
        const std::map<std::pair<std::string, uint32_t>, size_t> want { { { "host-a", 100 }, 1 },
            { { "host-b", 100 }, 2 }, { { "host-a", 200 }, 1 } };
        QCOMPARE(events, want);
    }

    void sortsAndKeepsLongDurations()
    {
        TraceBuilder b;
        Lanes l = makeLanes(b, 0);
        const TimeNs longDur = 7000000000ll; // past uint32 nanoseconds
        b.addKernel(l.gpu, 500, 1, b.intern("late"), 0, {});
        b.addKernel(l.gpu, 100, longDur, b.intern("long"), 0, {});
        b.addKernel(l.gpu, 100, 50, b.intern("short"), 0, {});
        Trace t = b.finish();
        const LaneEvents& ev = t.lane(l.gpu).events;
        QCOMPARE(t.str(ev.name(0)), std::string_view("long")); // equal starts: longer first
        QCOMPARE(ev.duration(0), longDur);
        QCOMPARE(t.str(ev.name(1)), std::string_view("short"));
        QCOMPARE(ev.start(2), TimeNs(500));
        QCOMPARE(ev.maxDuration(), longDur);
    }

    void launchOfEagerAndGraphKernels()
    {
        TraceBuilder b;
        Lanes l = makeLanes(b, 1);
        Lanes other = makeLanes(b, 2);
        const StringId launch = b.intern("cudaLaunchKernel"), graph = b.intern("cudaGraphLaunch");
        b.addApi(l.api, 0, 5, launch, 10);
        b.addApi(l.api, 0, 4, b.intern("cuLaunchKernel"), 10, ApiKind::Driver); // same id, driver level
        b.addKernel(l.gpu, 8, 3, b.intern("eager"), 10, {});
        b.addApi(l.api, 20, 10, graph, 11);
        KernelConfig g;
        g.graphId = 4;
        for (int i = 0; i < 5; ++i) {
            g.graphNodeId = uint64_t(i + 1);
            b.addKernel(l.gpu, 40 + i * 10, 5, b.intern("node"), 11, g);
        }
        b.addApi(other.api, 0, 5, launch, 11); // same id on another rank: never matched
        b.addKernel(l.gpu, 200, 5, b.intern("orphan"), 12, {});
        Trace t = b.finish();
        EventRef e = t.launchOf(l.gpu, 0);
        QVERIFY(e.valid());
        QCOMPARE(t.str(t.lane(e.lane).events.name(e.index)), std::string_view("cudaLaunchKernel"));
        for (uint32_t i = 1; i <= 5; ++i) {
            EventRef r = t.launchOf(l.gpu, i);
            QCOMPARE(r.lane, l.api);
            QCOMPARE(t.str(t.lane(r.lane).events.name(r.index)), std::string_view("cudaGraphLaunch"));
        }
        QVERIFY(!t.launchOf(l.gpu, 6).valid());
        const auto kids = t.launchedBy(l.api, 2); // the graph launch (index 2 after sorting by start)
        QCOMPARE(t.str(t.lane(l.api).events.name(2)), std::string_view("cudaGraphLaunch"));
        QCOMPARE(kids.size(), size_t(5));
    }

    void appendFromMatchesBuildingAtOnce()
    {
        auto fill = [](TraceBuilder& b, int from, int to) {
            Lanes l = makeLanes(b, 0);
            for (int i = from; i < to; ++i) {
                KernelConfig c;
                c.grid[0] = uint32_t(i % 3 + 1);
                b.addKernel(l.gpu, i * 100, 50, b.intern("k" + std::to_string(i % 4)), uint32_t(i), c);
                b.addMemop(
                    l.gpu, i * 100 + 60, 10, { MemopKind::Memcpy, CopyKind::HtoD, uint64_t(i), false }, uint32_t(i));
                b.addCollective(l.coll, i * 100, 40, b.intern("AllReduce"),
                    { uint64_t(i), b.intern("bf16"), 0, 0, uint64_t(i), 0, 0, 0 });
            }
            b.addStep(0, Step { uint32_t(from / 10), from * 100, to * 100, StepSource::File });
        };
        TraceBuilder all;
        fill(all, 0, 10);
        fill(all, 10, 20);
        fill(all, 5, 7); // late, out-of-order events: the lane must be re-sorted
        Trace expected = all.finish();

        Trace live;
        TraceBuilder b;
        fill(b, 0, 10);
        live.appendFrom(b);
        QCOMPARE(live.eventCount(), uint64_t(30));
        fill(b, 10, 20);
        live.appendFrom(b);
        fill(b, 5, 7);
        live.appendFrom(b);
        QCOMPARE(live.eventCount(), expected.eventCount());
        QCOMPARE(b.pendingEvents(), uint64_t(0));
        for (const Lane& le : expected.lanes()) {
            const Lane& ll = live.lane(*live.findLane(le.info.key()));
            QCOMPARE(ll.events.size(), le.events.size());
            for (size_t i = 0; i < le.events.size(); ++i) {
                QCOMPARE(ll.events.start(i), le.events.start(i));
                QCOMPARE(live.str(ll.events.name(i)), expected.str(le.events.name(i)));
                QCOMPARE(live.kindOf(ll.id, i), expected.kindOf(le.id, i));
                if (const MemopInfo* m = expected.memop(le.id, i))
                    QCOMPARE(live.memop(ll.id, i)->bytes, m->bytes);
                if (const CollectiveInfo* c = expected.collective(le.id, i))
                    QCOMPARE(live.str(live.collective(ll.id, i)->datatype), expected.str(c->datatype));
            }
            auto tl = ll.summary.totals(ll.events, 0, 100000), te = le.summary.totals(le.events, 0, 100000);
            QCOMPARE(tl.busy, te.busy);
            QCOMPARE(tl.count, te.count);
        }
        QCOMPARE(live.steps(0).size(), size_t(2)); // step 0 replaced by the later 0, step 1 added
    }

    void memoryPerEvent()
    {
        TraceBuilder b;
        Lanes l = makeLanes(b, 0);
        const StringId n = b.intern("k");
        const int count = 1000000;
        for (int i = 0; i < count; ++i)
            b.addKernel(l.gpu, TimeNs(i) * 1000, 700, n, uint32_t(i), {});
        Trace t = b.finish();
        const double perEvent = double(t.memoryBytes()) / count;
        qInfo("%.2f bytes per event", perEvent);
        QVERIFY(perEvent <= 32.0);
        QVERIFY(perEvent >= 24.0); // the columns alone take 24
    }

    // Host ranges (half the events, nested three deep) cost what kernels cost, and keep kind and depth.
    void memoryPerEventWithHost()
    {
        TraceBuilder b;
        Lanes l = makeLanes(b, 0);
        const LaneId cpu = b.lane({ LaneKind::CpuThread, 0, "h", 0, 99, "main CPU", 10 });
        const StringId k = b.intern("k"), op = b.intern("aten::mm"), py = b.intern("forward");
        const int count = 500000;
        for (int i = 0; i < count; ++i) {
            b.addKernel(l.gpu, TimeNs(i) * 1000, 700, k, uint32_t(i), {});
            if (i % 2 == 0)
                b.addHost(cpu, TimeNs(i) * 1000, 1900, py, HostKind::Python, 0);
            else
                b.addHost(cpu, TimeNs(i) * 1000 - 900, 300, op, HostKind::CpuOp, 1);
        }
        Trace t = b.finish();
        const double perEvent = double(t.memoryBytes()) / double(t.eventCount());
        qInfo("%.2f bytes per event, host ranges included", perEvent);
        QCOMPARE(t.eventCount(EventKind::Host), uint64_t(count));
        QVERIFY(perEvent <= 32.0);
        const LaneId id = *t.findLane(t.lane(cpu).info.key());
        QCOMPARE(t.hostKind(id, 0), HostKind::Python);
        QCOMPARE(t.hostDepth(id, 1), uint32_t(1));
        QCOMPARE(t.hostKind(id, 1), HostKind::CpuOp);
    }
};

QTEST_GUILESS_MAIN(TestTrace)
#include "tst_trace.moc"
