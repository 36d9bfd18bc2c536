// SPDX-License-Identifier: MIT
// Summary tables: own kernel time and per-step busy time when kernels of one stream overlap
// (programmatic dependent launch) and when they do not, fixed cases and random traces against brute force.
#include "model/trace/tracesummary.h"

#include <QtTest>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <random>

using namespace gapscope;
using namespace gapscope::model;

namespace {

// One GPU event of rank 0: a kernel named `name`, or a memcpy when name is null.
struct Ev {
    uint64_t stream = 1;
    TimeNs start = 0;
    TimeNs duration = 0;
    const char* name = nullptr;
};
using Evs = std::vector<Ev>;

Trace build(const Evs& evs, const std::vector<Step>& steps)
{
    TraceBuilder b;
    for (const Ev& e : evs) {
        const LaneId l = b.lane({ LaneKind::GpuStream, 0, "h", 0, e.stream, "", 0 });
        if (e.name)
            b.addKernel(l, e.start, e.duration, b.intern(e.name), 0, {});
        else
            b.addMemop(l, e.start, e.duration, { MemopKind::Memcpy, CopyKind::Unknown, 64, true }, 0);
    }
    for (const Step& s : steps)
        b.addStep(0, s);
    return b.finish();
}

const KernelRow& row(const Trace& t, const std::vector<KernelRow>& rows, std::string_view name)
{
    auto it = std::find_if(rows.begin(), rows.end(), [&](const KernelRow& r) { return t.str(r.name) == name; });
    if (it == rows.end())
        qFatal("no kernel row named %s", std::string(name).c_str());
    return *it;
}

} // namespace

Q_DECLARE_METATYPE(Evs)

class TestTraceSummary : public QObject {
    Q_OBJECT
private slots:
    // Kernels A and B (and sometimes a memcpy) in one step [0, 1000) of rank 0.
    void ownAndBusy_data()
    {
        QTest::addColumn<Evs>("events");
        QTest::addColumn<TimeNs>("ownA");
        QTest::addColumn<TimeNs>("ownB");
        QTest::addColumn<TimeNs>("rawB");
        QTest::addColumn<TimeNs>("busy");
        QTest::newRow("in order") << Evs { { 1, 100, 200, "A" }, { 1, 350, 150, "B" } } << TimeNs(200) << TimeNs(150)
                                  << TimeNs(150) << TimeNs(350);
        QTest::newRow("back to back") << Evs { { 1, 100, 200, "A" }, { 1, 300, 150, "B" } } << TimeNs(200)
                                      << TimeNs(150) << TimeNs(150) << TimeNs(350);
        // B launched early (PDL): starts 50 ns before A ends, waits, then runs until 500.
        QTest::newRow("pdl overlap") << Evs { { 1, 100, 200, "A" }, { 1, 250, 250, "B" } } << TimeNs(200) << TimeNs(200)
                                     << TimeNs(250) << TimeNs(400);
        QTest::newRow("same start: longer first") << Evs { { 1, 100, 200, "A" }, { 1, 100, 300, "B" } } << TimeNs(0)
                                                  << TimeNs(300) << TimeNs(300) << TimeNs(300);
        QTest::newRow("nested") << Evs { { 1, 100, 300, "A" }, { 1, 150, 150, "B" } } << TimeNs(300) << TimeNs(0)
                                << TimeNs(150) << TimeNs(300);
        // The latest end of every earlier event counts, not only the one just before.
        QTest::newRow("behind a long one") << Evs { { 1, 100, 400, "A" }, { 1, 150, 50, "A" }, { 1, 450, 100, "B" } }
                                           << TimeNs(400) << TimeNs(50) << TimeNs(100) << TimeNs(450);
        QTest::newRow("after a memcpy") << Evs { { 1, 100, 100, nullptr }, { 1, 150, 150, "B" }, { 1, 400, 50, "A" } }
                                        << TimeNs(50) << TimeNs(100) << TimeNs(150) << TimeNs(250);
        // Other streams run concurrently: no own-time cut, and their overlap is not removed from busy.
        QTest::newRow("two streams") << Evs { { 1, 100, 200, "A" }, { 2, 250, 250, "B" } } << TimeNs(200) << TimeNs(250)
                                     << TimeNs(250) << TimeNs(450);
        // Busy is clipped to the window; own time is not.
        QTest::newRow("past the window") << Evs { { 1, 100, 200, "A" }, { 1, 900, 300, "B" } } << TimeNs(200)
                                         << TimeNs(300) << TimeNs(300) << TimeNs(300);
    }
    void ownAndBusy()
    {
        QFETCH(Evs, events);
        QFETCH(TimeNs, ownA);
        QFETCH(TimeNs, ownB);
        QFETCH(TimeNs, rawB);
        QFETCH(TimeNs, busy);
        const Trace t = build(events, { { 0, 0, 1000, StepSource::Nvtx } });
        const auto kernels = kernelTable(t);
        QCOMPARE(row(t, kernels, "A").ownTotal, ownA);
        QCOMPARE(row(t, kernels, "B").ownTotal, ownB);
        QCOMPARE(row(t, kernels, "B").total, rawB);
        const auto steps = stepTable(t);
        QCOMPARE(steps.size(), size_t(1));
        QCOMPARE(steps[0].window, TimeNs(1000));
        QCOMPARE(steps[0].busy, busy);
    }

    // Streams are counted apart and joined: one stream with an early launch (own time differs from
    // raw) and one without, in either order, give medians over all four kernels.
    void streamsJoin()
    {
        for (const uint32_t early : { 1u, 2u }) {
            const uint32_t plain = 3 - early;
            // plain: k [0, 200), k [300, 500); early: k [0, 100), k [50, 350) (own from 100: 250).
            const Trace t = build(
                { { plain, 0, 200, "k" }, { plain, 300, 200, "k" }, { early, 0, 100, "k" }, { early, 50, 300, "k" } },
                {});
            const auto rows = kernelTable(t);
            QCOMPARE(rows.size(), size_t(1));
            QCOMPARE(rows[0].count, uint64_t(4));
            QCOMPARE(rows[0].total, TimeNs(800));
            QCOMPARE(rows[0].ownTotal, TimeNs(750));
            QCOMPARE(rows[0].median, TimeNs(200)); // 100 200 [200] 300
            QCOMPARE(rows[0].ownMedian, TimeNs(200)); // 100 200 [200] 250
            QCOMPARE(rows[0].min, TimeNs(100));
            QCOMPARE(rows[0].max, TimeNs(300));
        }
    }

    void mediansAndOrder()
    {
        // One stream: k [0, 100), k [200, 500), k [450, 700) (early: waits until 500), k [700, 800),
        // m [850, 1100), m [1000, 1100) (early and nested: no own time).
        const Trace t = build({ { 1, 0, 100, "k" }, { 1, 200, 300, "k" }, { 1, 450, 250, "k" }, { 1, 700, 100, "k" },
                                  { 1, 850, 250, "m" }, { 1, 1000, 100, "m" } },
            {});
        const auto rows = kernelTable(t);
        QCOMPARE(rows.size(), size_t(2));
        QCOMPARE(t.str(rows[0].name), std::string_view("k"));
        QCOMPARE(rows[0].count, uint64_t(4));
        QCOMPARE(rows[0].total, TimeNs(750));
        QCOMPARE(rows[0].min, TimeNs(100));
        QCOMPARE(rows[0].max, TimeNs(300));
        QCOMPARE(rows[0].median, TimeNs(250)); // 100 100 [250] 300: the upper median
        QCOMPARE(rows[0].ownTotal, TimeNs(700));
        QCOMPARE(rows[0].ownMedian, TimeNs(200)); // 100 100 [200] 300
        QCOMPARE(rows[1].count, uint64_t(2));
        QCOMPARE(rows[1].total, TimeNs(350));
        QCOMPARE(rows[1].median, TimeNs(250)); // 100 [250]
        QCOMPARE(rows[1].ownTotal, TimeNs(250));
        QCOMPARE(rows[1].ownMedian, TimeNs(250)); // 0 [250]

        // a [10, 310) waits behind b [0, 200): first by total (300 vs 200), last by own (110 vs 200).
        const Trace w = build({ { 1, 0, 200, "b" }, { 1, 10, 300, "a" } }, {});
        const auto byTotal = kernelTable(w);
        QCOMPARE(w.str(byTotal[0].name), std::string_view("a"));
        QCOMPARE(byTotal[0].ownTotal, TimeNs(110));
        const auto byOwn = kernelTable(w, KernelOrder::Own);
        QCOMPARE(w.str(byOwn[0].name), std::string_view("b"));
        QCOMPARE(w.str(byOwn[1].name), std::string_view("a"));

        // Equal own totals (100 each) go by name.
        const Trace tie = build({ { 1, 0, 100, "b" }, { 1, 50, 150, "a" } }, {});
        const auto tieOwn = kernelTable(tie, KernelOrder::Own);
        QCOMPARE(tieOwn[0].ownTotal, TimeNs(100));
        QCOMPARE(tieOwn[1].ownTotal, TimeNs(100));
        QCOMPARE(tie.str(tieOwn[0].name), std::string_view("a"));
    }

    void stepWindows()
    {
        // Windows [0, 500) and [500, 900) (the last one ends at its recorded end). A [400, 600) spans
        // the boundary; B [550, 700) was launched early behind it.
        const Trace t = build({ { 1, 100, 100, "C" }, { 1, 400, 200, "A" }, { 1, 550, 150, "B" } },
            { { 0, 0, 480, StepSource::Nvtx }, { 1, 500, 900, StepSource::Nvtx } });
        const auto steps = stepTable(t);
        QCOMPARE(steps.size(), size_t(2));
        QCOMPARE(steps[0].window, TimeNs(500));
        QCOMPARE(steps[0].gpuSpan, TimeNs(480));
        QCOMPARE(steps[0].busy, TimeNs(200)); // C 100 + A's first 100
        QCOMPARE(steps[0].kernels, uint64_t(2));
        QCOMPARE(steps[1].window, TimeNs(400));
        QCOMPARE(steps[1].busy, TimeNs(200)); // A's last 100 + B past A's end 100 (the sum would say 250)
        QCOMPARE(steps[1].kernels, uint64_t(1));
    }

    // Random streams with early launches, nesting and memcpys: own time and busy against brute force.
    // kthOfSpans against a sort of all values: many values (the histogram path) and few (a copy), spread
    // wide, all small, all equal, up to UINT32_MAX, in spans of every size including empty ones.
    void kthOfSpansIsTheSortedValue()
    {
        std::mt19937_64 rng(3);
        const std::vector<std::function<uint32_t()>> kinds = {
            [&] { return uint32_t(rng()); },
            [&] { return uint32_t(rng() % 900); },
            [&] { return uint32_t(7); },
            [&] { return rng() % 3 ? UINT32_MAX - uint32_t(rng() % 5) : uint32_t(rng() % 70000); },
            [&] { return uint32_t(40000 + rng() % 200000); },
        };
        for (size_t kind = 0; kind < kinds.size(); ++kind)
            for (size_t n : { size_t(1), size_t(5000), size_t(65536), size_t(65537), size_t(300000) }) {
                std::vector<std::vector<uint32_t>> blocks;
                std::vector<uint32_t> all;
                while (all.size() < n) {
                    const size_t len = std::min<size_t>(n - all.size(), rng() % 3 ? rng() % 40000 : 0);
                    blocks.emplace_back();
                    for (size_t i = 0; i < len; ++i)
                        blocks.back().push_back(kinds[kind]());
                    all.insert(all.end(), blocks.back().begin(), blocks.back().end());
                }
                std::vector<U32Span> spans;
                for (const auto& b : blocks)
                    spans.push_back({ b.data(), b.size() });
                std::sort(all.begin(), all.end());
                for (uint64_t k : { uint64_t(0), uint64_t(n / 2), uint64_t(n - 1), uint64_t(rng() % n) })
                    QCOMPARE(kthOfSpans(spans, k), all[size_t(k)]);
            }
    }

    // Medians of names with more kernels than the selection copies (the histogram path), spread over
    // streams and over several add() calls, one name with early launches on one stream from the middle on.
    void largeMediansAcrossParts()
    {
        std::mt19937_64 rng(9);
        TraceBuilder b;
        std::map<std::string, std::vector<TimeNs>> raw, own;
        const StringId many = b.intern("many"), late = b.intern("late");
        for (uint64_t stream = 1; stream <= 3; ++stream) {
            const LaneId l = b.lane({ LaneKind::GpuStream, 0, "h", 0, stream, "", 0 });
            TimeNs end = 0; // of the stream's last kernel
            for (int i = 0; i < 60000; ++i) {
                const bool isLate = i % 2 == 1;
                const TimeNs d = 100 + TimeNs(rng() % (isLate ? 5000 : 300000));
                // "late" kernels of stream 2 from its 35,000th kernel on start 50 ns before the last one ends.
                const bool early = isLate && stream == 2 && i >= 35000;
                const TimeNs start = early ? end - 50 : end + TimeNs(rng() % 100);
                b.addKernel(l, start, d, isLate ? late : many, 0, {});
                raw[isLate ? "late" : "many"].push_back(d);
                own[isLate ? "late" : "many"].push_back(early ? d - 50 : d);
                end = start + d;
            }
        }
        const Trace t = b.finish();
        KernelTableBuilder parts;
        const TimeNs cut = t.endTime() / 3;
        parts.add(t, std::numeric_limits<TimeNs>::min(), cut);
        parts.add(t, cut, std::numeric_limits<TimeNs>::max());
        const auto median = [](std::vector<TimeNs> v) {
            std::sort(v.begin(), v.end());
            return v[v.size() / 2];
        };
        for (const auto& rows : { parts.finish(KernelOrder::Total, [&t](StringId id) { return t.str(id); }),
                 kernelTable(t) }) {
            QCOMPARE(rows.size(), size_t(2));
            for (const KernelRow& r : rows) {
                const std::string name(t.str(r.name));
                QCOMPARE(r.count, uint64_t(raw[name].size()));
                QCOMPARE(r.median, median(raw[name]));
                QCOMPARE(r.ownMedian, median(own[name]));
                QCOMPARE(r.ownTotal, std::accumulate(own[name].begin(), own[name].end(), TimeNs(0)));
            }
        }
    }

    void randomAgainstBruteForce()
    {
        std::mt19937_64 rng(11);
        const char* names[] = { "k0", "k1", "k2", "k3", "k4" };
        for (int round = 0; round < 20; ++round) {
            Evs evs;
            for (uint64_t stream = 1; stream <= 3; ++stream) {
                TimeNs t = TimeNs(rng() % 500);
                for (int i = 0; i < 300; ++i) {
                    const TimeNs d = TimeNs(rng() % 400);
                    evs.push_back({ stream, t, d, rng() % 8 ? names[rng() % 5] : nullptr });
                    const int r = int(rng() % 4);
                    t += r == 0 ? -TimeNs(rng() % 200) : r == 1 ? TimeNs(rng() % (d + 1)) : d + TimeNs(rng() % 300);
                    t = std::max<TimeNs>(t, 0);
                }
            }
            std::vector<Step> steps;
            for (uint32_t s = 0; s < 6; ++s)
                steps.push_back(
                    { s, TimeNs(s) * 20000 + TimeNs(rng() % 5000), TimeNs(s) * 20000 + 15000, StepSource::Nvtx });
            const Trace t = build(evs, steps);

            // Brute force: per stream, events sorted (start, longer first) as the trace keeps them.
            std::map<uint64_t, Evs> byStream;
            for (const Ev& e : evs)
                byStream[e.stream].push_back(e);
            std::map<std::string, std::vector<TimeNs>> own, raw;
            for (auto& [stream, v] : byStream) {
                std::stable_sort(v.begin(), v.end(), [](const Ev& a, const Ev& b) {
                    return a.start != b.start ? a.start < b.start : a.duration > b.duration;
                });
                for (size_t i = 0; i < v.size(); ++i) {
                    TimeNs from = v[i].start;
                    for (size_t j = 0; j < i; ++j)
                        from = std::max(from, v[j].start + v[j].duration);
                    if (v[i].name) {
                        own[v[i].name].push_back(std::max<TimeNs>(0, v[i].start + v[i].duration - from));
                        raw[v[i].name].push_back(v[i].duration);
                    }
                }
            }
            auto sum = [](const std::vector<TimeNs>& v) { return std::accumulate(v.begin(), v.end(), TimeNs(0)); };
            auto median = [](std::vector<TimeNs> v) {
                std::sort(v.begin(), v.end());
                return v[v.size() / 2];
            };
            const auto kernels = kernelTable(t);
            QCOMPARE(kernels.size(), raw.size());
            for (const KernelRow& r : kernels) {
                const std::string name(t.str(r.name));
                QCOMPARE(r.total, sum(raw[name]));
                QCOMPARE(r.median, median(raw[name]));
                QCOMPARE(r.ownTotal, sum(own[name]));
                QCOMPARE(r.ownMedian, median(own[name]));
            }
            const auto rows = stepTable(t);
            QCOMPARE(rows.size(), steps.size());
            for (size_t s = 0; s < rows.size(); ++s) {
                const TimeNs w0 = steps[s].start, w1 = s + 1 < steps.size() ? steps[s + 1].start : steps[s].end;
                TimeNs busy = 0;
                for (auto& [stream, v] : byStream) {
                    std::vector<bool> on(size_t(w1 - w0), false); // one flag per ns of the window
                    for (const Ev& e : v)
                        for (TimeNs x = std::max(e.start, w0); x < std::min(e.start + e.duration, w1); ++x)
                            on[size_t(x - w0)] = true;
                    busy += TimeNs(std::count(on.begin(), on.end(), true));
                }
                QCOMPARE(rows[s].busy, busy);
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestTraceSummary)
#include "tst_tracesummary.moc"
