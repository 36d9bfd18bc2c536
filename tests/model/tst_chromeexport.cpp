// SPDX-License-Identifier: MIT
// The Chrome trace JSON export, parsed back: one complete event per trace event with the arguments
// of exportrules.h, a process per rank named like the Perfetto export's, a thread per lane (GPU
// streams, CPU API threads, NVTX, collectives), and one "s"/"f" flow pair per launch -> GPU event.
#include "model/base/json.h"
#include "model/export/chromeexport.h"
#include "model/export/exportrules.h"
#include "model/synth/synth.h"

#include <QtTest>

#include <cstdio>
#include <map>
#include <set>

using namespace gapscope;
using namespace gapscope::model;

namespace {
// The trace exported to a temporary file and parsed back.
Expected<json::Value> exportAndParse(const Trace& t, ChromeExportStats& stats)
{
    std::FILE* f = std::tmpfile();
    auto st = exportChromeJson(t, f);
    if (!st) {
        std::fclose(f);
        return Status::error(st.error());
    }
    stats = *st;
    std::rewind(f);
    std::string text(size_t(st->bytes), '\0');
    const size_t read = std::fread(text.data(), 1, text.size(), f);
    std::fclose(f);
    if (read != text.size())
        return Status::error("short read of the export");
    return json::parse(text);
}
} // namespace

class TestChromeExport : public QObject {
    Q_OBJECT
private slots:
    void eventsLanesAndFlows_data()
    {
        QTest::addColumn<bool>("graphs");
        QTest::newRow("graphs") << true;
        QTest::newRow("eager") << false;
    }
    void eventsLanesAndFlows()
    {
        QFETCH(bool, graphs);
        SynthOptions so;
        so.ranks = 2;
        so.steps = 3;
        so.kernelsPerStep = 40;
        so.graphMode = graphs;
        so.syncStallUs = 20;
        auto t = synthesize(so);
        QVERIFY(t.hasValue());
        ChromeExportStats stats;
        auto doc = exportAndParse(*t, stats);
        QVERIFY2(doc.hasValue(), doc.hasValue() ? "" : doc.error().c_str());
        const auto* st = &stats;

        std::map<std::string, size_t> byCat;
        std::set<std::string> processes, threads;
        std::map<int64_t, std::pair<int, int>> flows; // id -> (starts, finishes)
        for (const json::Value& e : (*doc)["traceEvents"].items()) {
            const std::string ph = e["ph"].toString();
            if (ph == "X")
                ++byCat[e["cat"].toString()];
            else if (ph == "M" && e["name"].toString() == "process_name")
                processes.insert(e["args"]["name"].toString());
            else if (ph == "M" && e["name"].toString() == "thread_name")
                threads.insert(std::to_string(e["pid"].toInt()) + "/" + e["args"]["name"].toString());
            else if (ph == "s")
                ++flows[e["id"].toInt()].first;
            else if (ph == "f")
                ++flows[e["id"].toInt()].second;
        }
        for (EventKind k : { EventKind::Kernel, EventKind::Api, EventKind::Nvtx, EventKind::Collective,
                 EventKind::Memcpy, EventKind::Sync })
            QCOMPARE(uint64_t(byCat[toString(k)]), t->eventCount(k));
        for (uint32_t r : t->ranks())
            QVERIFY(processes.count(rankTitle(*t, r)));
        for (const Lane& l : t->lanes()) { // a thread's lanes share one record: "NVTX ... + API ..."
            bool named = false;
            for (const std::string& th : threads)
                named |= th.rfind(std::to_string(l.info.rank) + "/", 0) == 0
                    && th.find(laneTitle(l.info)) != std::string::npos;
            QVERIFY2(named, laneTitle(l.info).c_str());
        }
        uint64_t expected = 0;
        for (const Lane& l : t->lanes())
            if (l.info.kind == LaneKind::GpuStream)
                for (size_t i = 0; i < l.events.size(); ++i)
                    expected += t->launchOf(l.id, i).valid();
        QVERIFY(expected > 0);
        QCOMPARE(uint64_t(flows.size()), expected);
        QCOMPARE(st->flows, expected);
        for (const auto& [id, n] : flows)
            QVERIFY(n.first == 1 && n.second == 1);
    }

    // The NVTX lane and the CUDA API lane of one thread share its tid (as Kineto's traces do): one
    // thread_name record names both, not two records that clash.
    void lanesOfOneThreadShareOneName()
    {
        TraceBuilder b;
        const LaneId nv = b.lane({ LaneKind::Nvtx, 0, "h", 0, 100, "NVTX thread 100", 1 });
        const LaneId api = b.lane({ LaneKind::CpuApi, 0, "h", 0, 100, "CUDA API thread 100", 1 });
        const LaneId gpu = b.lane({ LaneKind::GpuStream, 0, "h", 0, 7, "", 1 });
        b.addNvtx(nv, 0, 1000, b.intern("decode"), 0);
        b.addApi(api, 100, 50, b.intern("cudaLaunchKernel"), 1);
        b.addKernel(gpu, 200, 100, b.intern("k"), 1, KernelConfig {});
        const Trace t = b.finish();
        ChromeExportStats stats;
        auto doc = exportAndParse(t, stats);
        QVERIFY2(doc.hasValue(), doc.hasValue() ? "" : doc.error().c_str());
        std::map<int64_t, std::vector<std::string>> names; // tid -> thread_name records
        for (const json::Value& e : (*doc)["traceEvents"].items())
            if (e["ph"].toString() == "M" && e["name"].toString() == "thread_name")
                names[e["tid"].toInt()].push_back(e["args"]["name"].toString());
        QCOMPARE(names.size(), size_t(2)); // thread 100 and stream 7
        QCOMPARE(names[100].size(), size_t(1));
        const std::string a = laneTitle(t.lane(nv).info), c = laneTitle(t.lane(api).info);
        QVERIFY2(names[100][0] == a + " + " + c || names[100][0] == c + " + " + a, names[100][0].c_str());
        QCOMPARE(names[7], std::vector<std::string> { laneTitle(t.lane(gpu).info) });
    }

    // A kernel that starts before the one before it on its stream has ended (programmatic dependent
    // launch) goes to an overlap thread of its own, with its real times, so that viewers which need a
    // thread's slices to nest (Perfetto) keep it.
    void overlappingKernelsGetTheirOwnThread()
    {
        TraceBuilder b;
        LaneInfo info;
        info.kind = LaneKind::GpuStream;
        info.stream = 7;
        info.name = "stream 7";
        const LaneId lane = b.lane(info);
        const StringId k = b.intern("k");
        const TimeNs t0 = 1764460800000000000;
        b.addKernel(lane, t0, 100000, k, 1, KernelConfig {});
        b.addKernel(lane, t0 + 50000, 100000, k, 2, KernelConfig {});
        b.addKernel(lane, t0 + 200000, 10000, k, 3, KernelConfig {});
        const Trace t = b.finish();
        ChromeExportStats stats;
        auto doc = exportAndParse(t, stats);
        QVERIFY2(doc.hasValue(), doc.hasValue() ? "" : doc.error().c_str());
        std::map<int64_t, std::string> threadNames;
        std::map<int64_t, std::vector<std::pair<double, double>>> kernels; // tid -> (ts, dur) in us
        for (const json::Value& e : (*doc)["traceEvents"].items()) {
            if (e["ph"].toString() == "M" && e["name"].toString() == "thread_name")
                threadNames[e["tid"].toInt()] = e["args"]["name"].toString();
            else if (e["ph"].toString() == "X" && e["cat"].toString() == "kernel")
                kernels[e["tid"].toInt()].push_back({ e["ts"].toDouble(), e["dur"].toDouble() });
        }
        QCOMPARE(kernels.size(), size_t(2));
        QCOMPARE(threadNames[7], laneTitle(info));
        using V = std::vector<std::pair<double, double>>;
        QCOMPARE(kernels[7], (V { { 0, 100 }, { 200, 10 } }));
        for (const auto& [tid, v] : kernels)
            if (tid != 7) {
                QCOMPARE(threadNames[tid], overlapTrackTitle(info, 1));
                QCOMPARE(v, (V { { 50, 100 } }));
            }
    }
};

QTEST_GUILESS_MAIN(TestChromeExport)
#include "tst_chromeexport.moc"
