// SPDX-License-Identifier: MIT
// TraceOverview (model/io/overview.h): the OVERVIEW frame a writer puts in every file and the one pass
// over the chunks that builds it for a file without one give the same lanes, nodes, steps and
// counters (and graph-node entries, which every window gets); its totals are traceStats of a full read; folding it for
// a screen keeps every event and its time; a damaged chunk is skipped and counted as a full read skips and counts it; a
// file cut before its index gets it rebuilt from its chunks.
#include "../format/randomtrace.h"
#include "model/format/fileformat.h"
#include "model/format/trace.pb.h"
#include "model/format/tracereader.h"
#include "model/format/tracewriter.h"
#include "model/format/zstdcodec.h"
#include "model/io/overview.h"
#include "model/io/tracefile.h"
#include "model/io/tracewindow.h"
#include "model/open/traceopen.h"
#include "model/synth/synth.h"
#include "model/trace/tracesummary.h"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <sys/stat.h>
#include <random>
#include <unordered_map>

using namespace gapscope;
using namespace gapscope::model;

namespace {

std::string writeSynth(const QTemporaryDir& dir, const char* name, bool eager)
{
    SynthOptions o;
    o.ranks = 3;
    o.steps = 12;
    o.kernelsPerStep = 120;
    o.seed = 7;
    if (eager) {
        o.graphMode = false;
        o.hostOps = true;
        o.hostOpUs = 30;
    }
    std::string path = dir.filePath(name).toStdString();
    if (Status s = synthesizeToFile(o, path); !s)
        qFatal("%s", s.message().c_str());
    return path;
}

TraceOverview overviewOf(const std::string& path, bool useFrame)
{
    auto reader = format::TraceReader::open(path);
    if (!reader)
        qFatal("%s", reader.error().c_str());
    OverviewOptions o;
    o.useFrame = useFrame;
    auto ov = TraceOverview::open(**reader, o);
    if (!ov)
        qFatal("%s", ov.error().c_str());
    return std::move(*ov);
}

void compareStats(const TraceStats& a, const TraceStats& b)
{
    QCOMPARE(a.byKind, b.byKind);
    QCOMPARE(a.byHostKind, b.byHostKind);
    QCOMPARE(a.cpuThreads, b.cpuThreads);
    QCOMPARE(a.kernels, b.kernels);
    QCOMPARE(a.kernelTime, b.kernelTime);
    QCOMPARE(a.ranks.size(), b.ranks.size());
    for (size_t i = 0; i < a.ranks.size(); ++i) {
        QCOMPARE(a.ranks[i].rank, b.ranks[i].rank);
        QCOMPARE(a.ranks[i].events, b.ranks[i].events);
        QCOMPARE(a.ranks[i].kernels, b.ranks[i].kernels);
        QCOMPARE(a.ranks[i].kernelTime, b.ranks[i].kernelTime);
        QCOMPARE(a.ranks[i].steps, b.ranks[i].steps);
        QCOMPARE(a.ranks[i].lanes, b.ranks[i].lanes);
    }
    QCOMPARE(int(a.stepSource), int(b.stepSource));
}

} // namespace

class TstOverview : public QObject {
    Q_OBJECT
private slots:
    void frameAndPassAgreeWithAFullRead_data()
    {
        QTest::addColumn<bool>("eager");
        QTest::newRow("graph") << false;
        QTest::newRow("eager, host operators") << true;
    }

    void frameAndPassAgreeWithAFullRead()
    {
        QFETCH(bool, eager);
        QTemporaryDir dir;
        const std::string path = writeSynth(dir, "t.gapscope", eager);
        const TraceOverview frame = overviewOf(path, true), pass = overviewOf(path, false);
        QVERIFY(frame.fromFrame());
        QVERIFY(!pass.fromFrame());
        auto full = readTraceFile(path);
        QVERIFY2(full, full.error().c_str());
        compareStats(frame.stats(), traceStats(*full));
        compareStats(pass.stats(), traceStats(*full));
        QCOMPARE(frame.eventCount(), full->eventCount());
        QCOMPARE(frame.startTime(), full->startTime());
        QCOMPARE(frame.endTime(), full->endTime());
        QCOMPARE(frame.stepCount(), full->stepCount());
        QCOMPARE(frame.lanes().size(), full->laneCount());
        for (uint32_t r : full->ranks()) {
            const auto &a = frame.steps(r), &b = full->steps(r);
            QCOMPARE(a.size(), b.size());
            for (size_t i = 0; i < a.size(); ++i) {
                QCOMPARE(a[i].index, b[i].index);
                QCOMPARE(a[i].start, b[i].start);
                QCOMPARE(a[i].end, b[i].end);
            }
        }
        // The same nodes, level by level, from the frame and from the pass.
        QCOMPARE(frame.lanes().size(), pass.lanes().size());
        for (size_t l = 0; l < frame.lanes().size(); ++l) {
            const auto &x = frame.lanes()[l], &y = pass.lanes()[l];
            QCOMPARE(x.info.identity() == y.info.identity(), true);
            QCOMPARE(x.events, full->lane(LaneId(l)).events.size());
            QCOMPARE(x.levels.size(), y.levels.size());
            for (size_t k = 0; k < x.levels.size(); ++k) {
                QCOMPARE(x.levels[k].size(), y.levels[k].size());
                for (size_t i = 0; i < x.levels[k].size(); ++i) {
                    const auto &a = x.levels[k][i], &b = y.levels[k][i];
                    QVERIFY(a.start == b.start && a.end == b.end && a.busy == b.busy && a.count == b.count
                        && a.longest == b.longest && a.longestName == b.longestName);
                }
            }
        }
        QCOMPARE(frame.header().counters.size(), full->header().counters.size());
    }

    void foldKeepsEveryEvent_data()
    {
        QTest::addColumn<double>("nsPerPixel");
        QTest::newRow("whole trace on 1920 px") << 0.0;
        QTest::newRow("1 us per pixel") << 1000.0;
        QTest::newRow("10 ns per pixel") << 10.0;
    }

    void foldKeepsEveryEvent()
    {
        QFETCH(double, nsPerPixel);
        QTemporaryDir dir;
        const std::string path = writeSynth(dir, "t.gapscope", false);
        const TraceOverview o = overviewOf(path, true);
        auto full = readTraceFile(path);
        QVERIFY(full);
        const TimeNs t0 = o.startTime(), t1 = o.endTime();
        const double npp = nsPerPixel > 0 ? nsPerPixel : double(t1 - t0) / 1920.0;
        std::vector<TraceOverview::Item> items;
        for (LaneId l = 0; l < o.lanes().size(); ++l) {
            o.fold(l, t0, t1 + 1, npp, 3.0, items);
            uint64_t count = 0;
            TimeNs busy = 0, prevEnd = INT64_MIN;
            for (const auto& it : items) {
                count += it.count;
                busy += it.busy;
                QVERIFY(it.end >= it.start);
                prevEnd = std::max(prevEnd, it.end);
            }
            const LaneEvents& ev = full->lane(l).events;
            TimeNs want = 0;
            for (size_t i = 0; i < ev.size(); ++i)
                want += ev.duration(i);
            QCOMPARE(count, uint64_t(ev.size()));
            QCOMPARE(busy, want);
            if (!items.empty() && nsPerPixel == 0.0)
                QVERIFY2(items.size() <= 1920, qPrintable(QString::number(items.size())));
        }
    }

    // A file written before format 1.2 has no OVERVIEW frame: the pass builds it, saveOverview stores
    // it (events copied as they are, permissions kept), and the next open reads it: the same overview.
    void savedOverviewIsReadBack()
    {
        QTemporaryDir dir;
        const std::string path = writeSynth(dir, "n.gapscope", true);
        const std::string old = dir.filePath("old.gapscope").toStdString();
        { // the same file without its OVERVIEW frame
            auto reader = format::TraceReader::open(path);
            QVERIFY(reader);
            auto w = format::TraceWriter::create(old, (*reader)->index().header());
            QVERIFY(w);
            (*w)->setDictionaries((*reader)->index());
            std::string stored;
            for (const auto& f : (*reader)->frames()) {
                const auto type = format::FrameType(f.header.type);
                if (type == format::FrameType::Overview || type == format::FrameType::Header
                    || type == format::FrameType::Index)
                    continue;
                QVERIFY((*reader)->readStored(f, stored).isOk());
                QVERIFY((*w)->copyFrame(f.header, stored, &(*reader)->index().frames(int(f.indexEntry))).isOk());
            }
            QVERIFY((*w)->finish().isOk());
        }
        QVERIFY(::chmod(old.c_str(), 0640) == 0);
        auto reader = format::TraceReader::open(old);
        QVERIFY(reader);
        OverviewOptions keep;
        keep.keepPassFrame = true;
        auto pass = TraceOverview::open(**reader, keep);
        QVERIFY(pass);
        QVERIFY(!pass->fromFrame());
        QVERIFY(!pass->passFrame().empty());
        QVERIFY(overviewOf(old, true).passFrame().empty()); // kept only when asked for
        reader->reset();
        QVERIFY2(saveOverview(old, *pass).isOk(), "saveOverview failed");
        struct stat st {};
        QVERIFY(::stat(old.c_str(), &st) == 0);
        QCOMPARE(int(st.st_mode & 0777), 0640);
        const TraceOverview saved = overviewOf(old, true), original = overviewOf(path, true);
        QVERIFY(saved.fromFrame());
        compareStats(saved.stats(), original.stats());
        QCOMPARE(saved.lanes().size(), original.lanes().size());
        for (size_t l = 0; l < saved.lanes().size(); ++l) {
            QCOMPARE(saved.lanes()[l].levels.size(), original.lanes()[l].levels.size());
            QCOMPARE(saved.lanes()[l].levels[0].size(), original.lanes()[l].levels[0].size());
            for (size_t i = 0; i < saved.lanes()[l].levels[0].size(); ++i) {
                const auto &x = saved.lanes()[l].levels[0][i], &y = original.lanes()[l].levels[0][i];
                QCOMPARE(x.start, y.start);
                QCOMPARE(x.end, y.end);
                QCOMPARE(x.busy, y.busy);
                QCOMPARE(x.count, y.count);
            }
        }
        auto a = readTraceFile(old), b = readTraceFile(path);
        QVERIFY(a && b);
        compareStats(traceStats(*a), traceStats(*b));
        QVERIFY(!saveOverview(old, saved).isOk()); // it has one now
    }

    // summaryTables reads whole steps a batch at a time and gives the rows of stepTable and kernelTable
    // of the whole trace, exactly: random streams with early launches (own time), steps that start
    // apart on the two ranks, kernels before the first step and after the last, small chunks.
    void summaryInBatchesIsTheWholeTrace()
    {
        std::mt19937_64 rng(5);
        TraceBuilder b;
        const char* names[] = { "k0", "k1", "k2", "k3", "k4", "k5" };
        for (uint32_t rank = 0; rank < 2; ++rank) {
            for (uint64_t stream = 1; stream <= 2; ++stream) {
                const LaneId l = b.lane({ LaneKind::GpuStream, rank, "h", rank, stream, "", 0 });
                TimeNs t = TimeNs(rng() % 500);
                for (int i = 0; i < 4000; ++i) {
                    const TimeNs d = TimeNs(rng() % 400);
                    b.addKernel(l, t, d, b.intern(names[rng() % 6]), 0, {});
                    const int r = int(rng() % 4);
                    t += r == 0 ? -TimeNs(rng() % 200) : r == 1 ? TimeNs(rng() % (d + 1)) : d + TimeNs(rng() % 300);
                    t = std::max<TimeNs>(t, 0);
                }
            }
            for (uint32_t s = 0; s < 40; ++s) // from 20 us, so that kernels run before the first step
                b.addStep(rank,
                    { s, 20000 + TimeNs(s) * 15000 + TimeNs(rng() % 3000) + rank * 1000,
                        20000 + TimeNs(s) * 15000 + 12000, StepSource::Nvtx });
        }
        const Trace t = b.finish();
        QTemporaryDir dir;
        const std::string path = dir.filePath("s.gapscope").toStdString();
        WriteOptions wo;
        wo.eventsPerChunk = 1000;
        QVERIFY(writeTraceFile(t, path, wo).isOk());
        auto full = readTraceFile(path);
        QVERIFY(full);
        QVERIFY(full->endTime() > 20000 + 40 * 15000); // kernels after the last step too
        auto reader = format::TraceReader::open(path);
        QVERIFY(reader);
        auto overview = TraceOverview::open(**reader);
        QVERIFY(overview);
        for (const KernelOrder order : { KernelOrder::Total, KernelOrder::Own }) {
            auto tables = summaryTables(**reader, *overview, order, 800); // two steps a batch
            QVERIFY2(tables, tables.error().c_str());
            QVERIFY(tables->batches >= 10);
            const auto steps = stepTable(*full);
            QCOMPARE(tables->steps.size(), steps.size());
            for (size_t i = 0; i < steps.size(); ++i) {
                const StepRow &x = tables->steps[i], &y = steps[i];
                QCOMPARE(x.rank, y.rank);
                QCOMPARE(x.index, y.index);
                QCOMPARE(x.start, y.start);
                QCOMPARE(x.window, y.window);
                QCOMPARE(x.gpuSpan, y.gpuSpan);
                QCOMPARE(x.kernels, y.kernels);
                QCOMPARE(x.busy, y.busy);
            }
            const auto kernels = kernelTable(*full, order);
            QCOMPARE(tables->kernels.size(), kernels.size());
            uint64_t count = 0;
            for (size_t i = 0; i < kernels.size(); ++i) {
                const KernelRow &x = tables->kernels[i], &y = kernels[i];
                QCOMPARE(overview->str(x.name), full->str(y.name));
                QCOMPARE(x.count, y.count);
                QCOMPARE(x.total, y.total);
                QCOMPARE(x.min, y.min);
                QCOMPARE(x.max, y.max);
                QCOMPARE(x.median, y.median);
                QCOMPARE(x.ownTotal, y.ownTotal);
                QCOMPARE(x.ownMedian, y.ownMedian);
                count += x.count;
            }
            QCOMPARE(count, uint64_t(16000)); // every kernel once
        }
    }

    // Without kernel configurations and lane summaries every event is read the same; only the
    // configurations and the summary pyramids are gone.
    void readsWithoutKernelConfigs()
    {
        QTemporaryDir dir;
        SynthOptions so;
        so.ranks = 2;
        so.steps = 6;
        so.kernelsPerStep = 300;
        const std::string path = dir.filePath("c.gapscope").toStdString();
        QVERIFY(synthesizeToFile(so, path, nullptr, 3).isOk());
        auto full = readTraceFile(path);
        QVERIFY(full);
        ReadOptions ro;
        ro.kernelConfigs = false;
        ro.laneSummaries = false;
        auto lean = readTraceFile(path, ro);
        QVERIFY2(lean, lean.error().c_str());
        QCOMPARE(lean->laneCount(), full->laneCount());
        size_t kernels = 0;
        for (LaneId l = 0; l < full->laneCount(); ++l) {
            const LaneEvents &a = full->lane(l).events, &b = lean->lane(l).events;
            QCOMPARE(b.size(), a.size());
            QCOMPARE(lean->lane(l).summary.memoryBytes(), size_t(0)); // no pyramid built
            if (!a.empty())
                QVERIFY(full->lane(l).summary.memoryBytes() > 0);
            for (size_t i = 0; i < a.size(); ++i) {
                QCOMPARE(b.start(i), a.start(i));
                QCOMPARE(b.duration(i), a.duration(i));
                QCOMPARE(b.name(i), a.name(i));
                QCOMPARE(b.correlation(i), a.correlation(i));
                QCOMPARE(lean->kindOf(l, i), full->kindOf(l, i));
                if (full->kindOf(l, i) != EventKind::Kernel)
                    continue;
                ++kernels;
                QVERIFY(full->kernelConfig(l, i) != nullptr);
                QVERIFY(lean->kernelConfig(l, i) == nullptr);
            }
        }
        QCOMPARE(kernels, size_t(2 * 6 * 300));
    }

    // A window reads only the chunks that may overlap it, and keeps every lane and string id of the
    // file: each event of a full read that overlaps the window is there, the same event.
    void windowKeepsWhatOverlapsIt()
    {
        QTemporaryDir dir;
        SynthOptions so;
        so.ranks = 2;
        so.steps = 60;
        so.kernelsPerStep = 2000; // 240,000 kernels: several chunks of 65,536 events
        so.seed = 11;
        const std::string path = dir.filePath("w.gapscope").toStdString();
        QVERIFY(synthesizeToFile(so, path, nullptr, 3).isOk());
        auto full = readTraceFile(path);
        QVERIFY(full);
        auto reader = format::TraceReader::open(path);
        QVERIFY(reader);
        const TimeNs t0 = full->startTime() + (full->endTime() - full->startTime()) / 3;
        const TimeNs t1 = t0 + (full->endTime() - full->startTime()) / 10;
        ReadOptions ro;
        ro.windowStart = t0;
        ro.windowEnd = t1;
        auto win = readTrace(**reader, ro);
        QVERIFY2(win, win.error().c_str());
        QVERIFY(win->eventCount() < full->eventCount());
        QCOMPARE(win->laneCount(), full->laneCount());
        QCOMPARE(win->stringCount(), full->stringCount());
        for (LaneId l = 0; l < full->laneCount(); ++l) {
            QVERIFY(win->lane(l).info.identity() == full->lane(l).info.identity());
            const LaneEvents &a = full->lane(l).events, &b = win->lane(l).events;
            const auto [fa, la] = a.overlapping(t0, t1);
            const auto [fb, lb] = b.overlapping(t0, t1);
            size_t want = 0, got = 0;
            for (size_t i = fa; i < la; ++i)
                want += a.end(i) > t0 && a.start(i) < t1;
            for (size_t i = fb; i < lb; ++i)
                got += b.end(i) > t0 && b.start(i) < t1;
            QCOMPARE(got, want);
            if (want) {
                size_t i = fa, j = fb;
                while (!(a.end(i) > t0 && a.start(i) < t1))
                    ++i;
                while (!(b.end(j) > t0 && b.start(j) < t1))
                    ++j;
                QCOMPARE(b.start(j), a.start(i));
                QCOMPARE(b.duration(j), a.duration(i));
                QCOMPARE(b.name(j), a.name(i));
            }
        }
    }

    // A window read into the memory of an earlier one (ReadOptions::recycle) is the window read afresh,
    // event for event, whether it is smaller or larger than the one it takes the memory of; the earlier
    // one is left without events.
    void windowReadsIntoRecycledMemory()
    {
        QTemporaryDir dir;
        SynthOptions so;
        so.ranks = 2;
        so.steps = 60;
        so.kernelsPerStep = 1500;
        so.graphMode = false; // API and sync events besides the kernels
        so.hostOps = true;
        so.syncStallUs = 50;
        so.seed = 17;
        const std::string path = dir.filePath("r.gapscope").toStdString();
        QVERIFY(synthesizeToFile(so, path, nullptr, 3).isOk());
        auto reader = format::TraceReader::open(path);
        QVERIFY(reader);
        auto full = readTrace(**reader);
        QVERIFY(full);
        const TimeNs t0 = full->startTime(), span = full->endTime() - full->startTime();
        auto windowOf = [&](double from, double to, Trace* recycle) {
            ReadOptions ro;
            ro.windowStart = t0 + TimeNs(double(span) * from);
            ro.windowEnd = t0 + TimeNs(double(span) * to);
            ro.recycle = recycle;
            return readTrace(**reader, ro);
        };
        auto middle = windowOf(0.3, 0.6, nullptr);
        QVERIFY2(middle, middle.error().c_str());
        const uint64_t middleEvents = middle->eventCount();
        auto small = windowOf(0.1, 0.2, &*middle); // smaller: the columns shrink, old values below stay
        QVERIFY2(small, small.error().c_str());
        QCOMPARE(middle->eventCount(), uint64_t(0));
        auto smallFresh = windowOf(0.1, 0.2, nullptr);
        QVERIFY(smallFresh);
        QVERIFY(small->eventCount() < middleEvents);
        QCOMPARE(test::compareTraces(*small, *smallFresh), std::string());
        auto large = windowOf(0.2, 0.9, &*small); // larger than the memory it is given
        QVERIFY2(large, large.error().c_str());
        auto largeFresh = windowOf(0.2, 0.9, nullptr);
        QVERIFY(largeFresh);
        QVERIFY(large->eventCount() > middleEvents);
        QCOMPARE(test::compareTraces(*large, *largeFresh), std::string());
        size_t collectives = 0, syncs = 0;
        for (LaneId l = 0; l < large->laneCount(); ++l)
            for (size_t i = 0; i < large->lane(l).events.size(); ++i) {
                collectives += large->collective(l, i) != nullptr;
                syncs += large->sync(l, i) != nullptr;
            }
        QVERIFY(collectives > 0 && syncs > 0); // the side tables were read into recycled memory too
        // A whole read ignores the option: nothing of a window is taken for it.
        const uint64_t kept = smallFresh->eventCount();
        ReadOptions whole;
        whole.recycle = &*smallFresh;
        auto all = readTrace(**reader, whole);
        QVERIFY(all);
        QCOMPARE(test::compareTraces(*all, *full), std::string());
        QCOMPARE(smallFresh->eventCount(), kept);
        QVERIFY(kept > 0);
    }

    // A file cut before its index (agent killed): the pass over its chunks rebuilds the index, entry for
    // entry what the writer wrote for those frames, so that windows of it are read as of a whole file;
    // with a damaged chunk no index is rebuilt (the file is then read whole, in order).
    // Steps keep their kind, batch, tokens and label through a file (StepBlock's kind columns): a full
    // read, openTrace (the stored kinds are not found again), the overview from its frame and from the
    // pass, a window, and the in-order read of a file cut before its overview. A file whose steps say
    // nothing has no kind columns and reads as kind unknown.
    void storedStepKindsRoundTrip()
    {
        TraceBuilder b;
        std::vector<Step> want[2];
        for (uint32_t rank = 0; rank < 2; ++rank) {
            const LaneId l = b.lane({ LaneKind::GpuStream, rank, "h", rank, 7, "", 0 });
            for (uint32_t s = 0; s < 6; ++s) {
                const TimeNs t0 = 1000000 + TimeNs(s) * 100000;
                for (int k = 0; k < 40; ++k)
                    b.addKernel(l, t0 + k * 2000, 1500, b.intern(k % 2 ? "gemv" : "rmsnorm"), 0, {});
                Step st { s, t0, t0 + 90000, StepSource::Engine };
                if (s == 0) { // a prefill of 4 prompts, 512 tokens in all (SGLang's annotation)
                    st.kind = StepKind::Prefill;
                    st.batch = 4;
                    st.tokens = 512;
                    st.label = "step[PREFILL bs=4 toks=512]";
                } else if (s < 5) {
                    st.kind = StepKind::Decode;
                    st.batch = 4;
                    st.tokens = 4;
                    st.label = "step[DECODE bs=4]";
                } // step 5: nothing known
                b.addStep(rank, st);
                want[rank].push_back(st);
            }
        }
        const Trace t = b.finish();
        QTemporaryDir dir;
        const std::string path = dir.filePath("k.gapscope").toStdString();
        WriteOptions wo;
        wo.eventsPerChunk = 100;
        QVERIFY(writeTraceFile(t, path, wo).isOk());
        auto same = [&](const std::vector<Step>& got, const std::vector<Step>& expected, const char* how) {
            QVERIFY2(got.size() == expected.size(), how);
            for (size_t i = 0; i < got.size(); ++i) {
                QVERIFY2(got[i].index == expected[i].index && got[i].start == expected[i].start
                        && got[i].end == expected[i].end && got[i].source == expected[i].source,
                    how);
                QVERIFY2(got[i].kind == expected[i].kind, how);
                QVERIFY2(got[i].batch == expected[i].batch && got[i].tokens == expected[i].tokens, how);
                QVERIFY2(got[i].label == expected[i].label, how);
            }
        };
        auto full = readTraceFile(path);
        QVERIFY(full);
        auto opened = openTrace({ path });
        QVERIFY(opened);
        QCOMPARE(opened->stepReport().rule, std::string("file"));
        const TraceOverview frame = overviewOf(path, true), pass = overviewOf(path, false);
        QVERIFY(frame.fromFrame() && !pass.fromFrame());
        for (uint32_t rank = 0; rank < 2; ++rank) {
            same(full->steps(rank), want[rank], "full read");
            same(opened->steps(rank), want[rank], "openTrace");
            same(frame.steps(rank), want[rank], "overview frame");
            same(pass.steps(rank), want[rank], "overview pass");
        }
        const auto kinds = frame.stats().stepKinds; // what `info` prints of a large file
        QCOMPARE(kinds[size_t(StepKind::Prefill)], 1u);
        QCOMPARE(kinds[size_t(StepKind::Decode)], 4u);
        QCOMPARE(kinds[size_t(StepKind::Unknown)], 1u);
        QCOMPARE(kinds, traceStats(*full).stepKinds);

        auto reader = format::TraceReader::open(path);
        QVERIFY(reader);
        auto window = readWindow(**reader, frame, TimeWindow { 1000000, 1250000 });
        QVERIFY2(window, window ? "" : window.error().c_str());
        QVERIFY(!window->steps(1).empty());
        QCOMPARE(window->steps(1).front().kind, StepKind::Prefill);
        QCOMPARE(window->steps(1).front().tokens, 512u);
        QCOMPARE(window->steps(1).front().label, std::string("step[PREFILL bs=4 toks=512]"));

        // Cut before the overview: no index, the chunks read in order (ChunkImporter).
        std::string bytes;
        {
            std::ifstream in(path, std::ios::binary);
            bytes.assign(std::istreambuf_iterator<char>(in), {});
        }
        uint64_t cutAt = 0;
        for (const auto& f : (*reader)->frames())
            if (f.header.type == uint8_t(format::FrameType::Overview))
                cutAt = f.offset;
        QVERIFY(cutAt > 0);
        auto cut = readTraceBuffer(bytes.substr(0, cutAt), "cut");
        QVERIFY2(cut, cut ? "" : cut.error().c_str());
        for (uint32_t rank = 0; rank < 2; ++rank)
            same(cut->steps(rank), want[rank], "in-order read");

        // Steps that say nothing: no kind columns at all, and they read as unknown.
        TraceBuilder plain;
        const LaneId pl = plain.lane({ LaneKind::GpuStream, 0, "h", 0, 7, "", 0 });
        plain.addKernel(pl, 1000, 500, plain.intern("gemv"), 0, {});
        plain.addStep(0, Step { 0, 900, 2000, StepSource::Nvtx });
        const std::string plainPath = dir.filePath("p.gapscope").toStdString();
        QVERIFY(writeTraceFile(plain.finish(), plainPath, wo).isOk());
        auto plainReader = format::TraceReader::open(plainPath);
        QVERIFY(plainReader);
        format::ZstdDecompressor zstd;
        std::string raw;
        bool sawSteps = false;
        for (const auto& f : (*plainReader)->frames()) {
            pb::Chunk chunk;
            if (f.header.type != uint8_t(format::FrameType::Chunk) || !(*plainReader)->readMessage(f, zstd, raw, chunk))
                continue;
            sawSteps = sawSteps || chunk.steps().rank_size() > 0;
            QCOMPARE(chunk.steps().kind_size() + chunk.steps().label_size() + chunk.steps().tokens_size(), 0);
        }
        QVERIFY(sawSteps);
        auto plainRead = readTraceFile(plainPath);
        QVERIFY(plainRead);
        QCOMPARE(plainRead->steps(0).size(), size_t(1));
        QCOMPARE(plainRead->steps(0)[0].kind, StepKind::Unknown);
        QCOMPARE(overviewOf(plainPath, true).steps(0)[0].kind, StepKind::Unknown);
    }

    // A window of a CUDA-graph capture knows the node of every replayed kernel it holds, though the
    // chunk with the graph's node entries (written once) lies outside it: the OVERVIEW frame and the
    // pass over the chunks both carry every entry, and readWindow adds them. A chunk that holds nothing
    // but node entries is written (it was dropped once).
    void windowKnowsEveryGraphNode()
    {
        TraceBuilder b;
        const LaneId l = b.lane({ LaneKind::GpuStream, 0, "h", 0, 7, "", 0 });
        constexpr int kNodes = 30, kReplays = 40;
        for (int n = 0; n < kNodes; ++n) {
            GraphNodeInfo g;
            g.nodeId = 100 + uint64_t(n);
            g.graphId = 3;
            g.order = uint32_t(n);
            g.ranges = { b.intern("decode"), b.intern("layer " + std::to_string(n / 10)) };
            g.api = b.intern("stream capture");
            g.nodeType = 1;
            b.addGraphNode(g);
        }
        for (int r = 0; r < kReplays; ++r)
            for (int n = 0; n < kNodes; ++n) {
                KernelConfig c;
                c.graphId = 3;
                c.graphNodeId = 100 + uint64_t(n);
                b.addKernel(l, 1000000 + r * 100000 + n * 2000, 1500, b.intern("k" + std::to_string(n % 10)),
                    uint32_t(r + 1), c);
            }
        const Trace t = b.finish();
        QCOMPARE(t.graphNodes().size(), size_t(kNodes));
        QTemporaryDir dir;
        const std::string path = dir.filePath("g.gapscope").toStdString();
        WriteOptions wo;
        wo.eventsPerChunk = 100; // 12 chunks of kernels, then the node entries in a chunk of their own
        QVERIFY(writeTraceFile(t, path, wo).isOk());
        auto reader = format::TraceReader::open(path);
        QVERIFY(reader);
        int chunksWithNodes = 0;
        format::ZstdDecompressor zstd;
        std::string raw;
        for (const auto& f : (*reader)->frames()) {
            pb::Chunk chunk;
            if (f.header.type == uint8_t(format::FrameType::Chunk) && (*reader)->readMessage(f, zstd, raw, chunk))
                chunksWithNodes += chunk.graph_nodes_size() > 0;
        }
        QCOMPARE(chunksWithNodes, 1);
        const TimeNs last0 = 1000000 + (kReplays - 1) * 100000; // the last replay only
        const TimeWindow lastReplay { last0, last0 + 90000 };
        auto check = [&](const Trace& w, const char* how) {
            size_t kernels = 0;
            const LaneEvents& ev = w.lane(l).events;
            for (size_t i = 0; i < ev.size(); ++i) {
                const KernelConfig* c = w.kernelConfig(l, i);
                QVERIFY2(c, how);
                const GraphNodeInfo* node = w.graphNode(0, c->graphNodeId);
                QVERIFY2(node, how);
                QCOMPARE(node->order, uint32_t(c->graphNodeId - 100));
                QCOMPARE(node->ranges.size(), size_t(2));
                QCOMPARE(std::string(w.str(node->ranges[1])), "layer " + std::to_string(node->order / 10));
                QCOMPARE(w.str(node->api), std::string_view("stream capture"));
                ++kernels;
            }
            QVERIFY2(kernels >= size_t(kNodes), how);
            QCOMPARE(w.graphNodes().size(), size_t(kNodes));
        };
        for (bool useFrame : { true, false }) {
            const TraceOverview ov = overviewOf(path, useFrame);
            QVERIFY(ov.graphNodes());
            QCOMPARE(ov.graphNodes()->size(), size_t(kNodes));
            auto w = readWindow(**reader, ov, lastReplay);
            QVERIFY2(w, w ? "" : w.error().c_str());
            check(*w, useFrame ? "window, overview frame" : "window, overview pass");
        }
        auto full = readTraceFile(path);
        QVERIFY(full);
        check(*full, "full read");
        // Without the overview's entries the window knows no node (what the test guards against).
        ReadOptions plain;
        plain.windowStart = lastReplay.start;
        plain.windowEnd = lastReplay.end;
        auto bare = readTrace(**reader, plain);
        QVERIFY(bare);
        QVERIFY(bare->graphNodes().empty());
    }

    void cutFileGetsItsIndexRebuilt()
    {
        QTemporaryDir dir;
        SynthOptions so;
        so.ranks = 2;
        so.steps = 80;
        so.kernelsPerStep = 1500;
        so.graphMode = false; // API lanes and host events besides the kernels
        so.hostOps = true;
        so.seed = 13;
        const std::string path = dir.filePath("c.gapscope").toStdString();
        QVERIFY(synthesizeToFile(so, path, nullptr, 3).isOk());
        std::string bytes;
        {
            std::ifstream in(path, std::ios::binary);
            bytes.assign(std::istreambuf_iterator<char>(in), {});
        }
        auto whole = format::TraceReader::fromBuffer(bytes, "whole");
        QVERIFY(whole && (*whole)->hasIndex());
        const pb::Index& original = (*whole)->index();
        const std::string cutBytes = bytes.substr(0, bytes.size() * 7 / 10);
        auto cut = format::TraceReader::fromBuffer(cutBytes, "cut");
        QVERIFY(cut && !(*cut)->hasIndex() && (*cut)->truncated());
        QCOMPARE(fileEvents(**cut), uint64_t(0) + [&] {
            uint64_t n = 0;
            for (const auto& f : (*cut)->frames())
                n += f.header.type == uint8_t(format::FrameType::Chunk) ? f.header.events : 0;
            return n;
        }());
        auto ov = TraceOverview::openRebuildingIndex(**cut, OverviewOptions {});
        QVERIFY2(ov, ov ? "" : ov.error().c_str());
        QVERIFY((*cut)->hasIndex());
        const pb::Index& rebuilt = (*cut)->index();
        QVERIFY2(rebuilt.frames_size() > 4, std::to_string(rebuilt.frames_size()).c_str());
        QVERIFY(rebuilt.frames_size() < original.frames_size());
        for (int i = 0; i < rebuilt.frames_size(); ++i)
            QVERIFY2(rebuilt.frames(i).SerializeAsString() == original.frames(i).SerializeAsString(),
                ("entry " + std::to_string(i) + ": rebuilt " + rebuilt.frames(i).ShortDebugString() + "\nwritten "
                    + original.frames(i).ShortDebugString())
                    .c_str());
        QVERIFY(rebuilt.strings_size() <= original.strings_size() && rebuilt.strings_size() > 0);
        for (int i = 0; i < rebuilt.strings_size(); ++i)
            QCOMPARE(rebuilt.strings(i), original.strings(i));
        QCOMPARE(rebuilt.lanes_size(), original.lanes_size());
        QVERIFY(fileEvents(**cut) == rebuilt.total_events() && rebuilt.total_events() > 0);

        // A window of the cut file holds what a full read of it holds there.
        auto inOrder = format::TraceReader::fromBuffer(cutBytes, "cut");
        QVERIFY(inOrder);
        auto full = readTrace(**inOrder, ReadOptions {});
        QVERIFY(full);
        const TimeNs t0 = full->startTime() + (full->endTime() - full->startTime()) / 3;
        const TimeNs t1 = t0 + (full->endTime() - full->startTime()) / 4;
        auto win = readWindow(**cut, *ov, TimeWindow { t0, t1 }, ReadOptions {});
        QVERIFY2(win, win ? "" : win.error().c_str());
        QVERIFY(win->eventCount() < full->eventCount());
        QCOMPARE(win->laneCount(), full->laneCount());
        // Lane ids differ (an in-order read numbers lanes as it meets them): lanes matched by identity.
        auto inWindow = [&](const Trace& t) {
            std::unordered_map<format::LaneKey, size_t, format::LaneKeyHash> n;
            for (LaneId l = 0; l < t.laneCount(); ++l) {
                const LaneEvents& ev = t.lane(l).events;
                for (size_t i = 0; i < ev.size(); ++i)
                    n[t.lane(l).info.identity()] += ev.end(i) > t0 && ev.start(i) < t1;
            }
            return n;
        };
        const auto want = inWindow(*full), got = inWindow(*win);
        QCOMPARE(got.size(), want.size());
        uint64_t seen = 0;
        for (const auto& [key, n] : want) {
            QVERIFY(got.count(key));
            QCOMPARE(got.at(key), n);
            seen += n;
        }
        QVERIFY(seen > 1000);
        compareStats(ov->stats(), traceStats(*full));

        // A damaged chunk: nothing rebuilt.
        std::string damaged = cutBytes;
        const format::FrameInfo* chunk = nullptr;
        for (const auto& f : (*inOrder)->frames())
            if (f.header.type == uint8_t(format::FrameType::Chunk))
                chunk = &f; // the last whole one
        QVERIFY(chunk);
        damaged[size_t(chunk->offset + format::kFrameHeaderSize + 10)] ^= 0x5a;
        auto bad = format::TraceReader::fromBuffer(damaged, "bad");
        QVERIFY(bad);
        QVERIFY(TraceOverview::openRebuildingIndex(**bad, OverviewOptions {}));
        QVERIFY(!(*bad)->hasIndex());
    }

    void damagedChunkIsSkippedAndCounted()
    {
        QTemporaryDir dir;
        const std::string path = writeSynth(dir, "t.gapscope", false);
        std::string bytes;
        {
            std::ifstream in(path, std::ios::binary);
            bytes.assign(std::istreambuf_iterator<char>(in), {});
        }
        auto reader = format::TraceReader::fromBuffer(bytes, "t");
        QVERIFY(reader);
        const format::FrameInfo* chunk = nullptr;
        for (const auto& f : (*reader)->frames())
            if (f.header.type == uint8_t(format::FrameType::Chunk) && !chunk)
                chunk = &f;
        QVERIFY(chunk);
        bytes[size_t(chunk->offset + format::kFrameHeaderSize + 10)] ^= 0x5a; // its payload: checksum fails
        {
            std::ofstream out(path, std::ios::binary | std::ios::trunc);
            out << bytes;
        }
        const TraceOverview pass = overviewOf(path, false);
        auto full = readTraceFile(path);
        QVERIFY(full);
        compareStats(pass.stats(), traceStats(*full));
        auto counter = [](const TraceHeader& h, const std::string& name) {
            for (const auto& c : h.counters)
                if (c.name == name)
                    return c.value;
            return uint64_t(0);
        };
        QVERIFY(counter(full->header(), "read_frames_skipped") > 0);
        QCOMPARE(counter(pass.header(), "read_frames_skipped"), counter(full->header(), "read_frames_skipped"));
        QCOMPARE(counter(pass.header(), "read_events_lost"), counter(full->header(), "read_events_lost"));
    }
};

QTEST_GUILESS_MAIN(TstOverview)
#include "tst_overview.moc"
