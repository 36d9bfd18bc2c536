// SPDX-License-Identifier: MIT
// gapscope-calibrate: measures the box and writes the hardware profile the budget reads.
#include "kernels/calibrator.h"
#include "kernels/cudastatus.h"
#include "kernels/gemv.h"
#include "kernels/rankgroup.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <tuple>

using namespace gapscope;
using namespace gapscope::kernels;

namespace {

const char* kUsage = R"(usage: gapscope-calibrate [--output FILE] [--gpus N] [--repeats R] [--quick] [--json]
Measures this box and writes a calibration profile (JSON) for `gapscope-cli budget --hw FILE`:
HBM copy and read bandwidth, the GEMV floor curve (1 MB .. 1 GB, K = 4096, batch 1) and GEMV
bandwidth per weight format, eager and graph launch cost, NCCL AllReduce latency vs size over the
GPUs (one process per GPU), peak bf16 matmul rate (cuBLAS, random data). Every figure is measured
R times (default 3); the profile holds the medians and the largest spread between repeats. The
host-bound launch figures (eager, graph fixed) move with the process: each process takes the
lowest of its repeats, and the profile the median over this run and two fresh processes.
  --output FILE   default gapscope-calibration.json
  --gpus N        GPUs for the AllReduce table (default: all visible)
  --quick         smaller sizes, fewer iterations (smoke test)
  --json          print the profile instead of the table
)";

json::Value curve(const std::vector<CurvePoint>& c)
{
    json::Value a = json::Value::array();
    for (const auto& p : c) {
        json::Value o = json::Value::array();
        o.push(p.bytes);
        o.push(p.us);
        a.push(std::move(o));
    }
    return a;
}

std::vector<CurvePoint> curveFrom(const json::Value& a)
{
    std::vector<CurvePoint> c;
    for (const auto& p : a.items())
        c.push_back({ p.at(0).toDouble(), p.at(1).toDouble() });
    return c;
}

json::Value figuresJson(const SingleGpuFigures& f)
{
    json::Value j = json::Value::object();
    j.set("copy", f.copyGbs);
    j.set("read", f.readGbs);
    j.set("gemv", curve(f.gemv));
    json::Value fm = json::Value::object();
    for (const auto& p : f.formats)
        fm.set(p.format, curve({ { p.bytes, p.us } }));
    j.set("formats", std::move(fm));
    json::Value va = json::Value::array();
    for (const auto& p : f.variants) {
        json::Value o = json::Value::array();
        o.push(p.format);
        o.push(p.bytes);
        o.push(p.us);
        va.push(std::move(o));
    }
    j.set("variants", std::move(va));
    j.set("copies", curve(f.copies));
    j.set("reads", curve(f.reads));
    j.set("eager", f.eagerUs);
    j.set("graph_fixed", f.graphFixedUs);
    j.set("graph_node", f.graphPerNodeUs);
    j.set("matmul", f.matmulTflops);
    return j;
}

Status rankMain(const CalibrateOptions& o, uint32_t rank, uint32_t ranks, const ncclUniqueId& id, json::Value& out)
{
    int count = 0;
    GS_CUDA(cudaGetDeviceCount(&count));
    if (count == 0)
        return Status::error("no CUDA device");
    GS_CUDA(cudaSetDevice(static_cast<int>(rank % static_cast<uint32_t>(count))));
    std::vector<std::vector<CurvePoint>> ar;
    GS_TRY(Calibrator::measureAllReduce(o, rank, ranks, id, ar));
    out = json::Value::object();
    if (rank != 0)
        return Status::ok();
    CalibrationProfile::Device d;
    GS_TRY(Calibrator::deviceInfo(0, d));
    json::Value dev = json::Value::object();
    dev.set("name", d.name);
    dev.set("uuid", d.uuid);
    dev.set("sm_count", d.smCount);
    dev.set("memory_bytes", d.memoryBytes);
    dev.set("l2_bytes", d.l2Bytes);
    dev.set("sm_clock_mhz", d.smClockMhz);
    dev.set("memory_clock_mhz", d.memoryClockMhz);
    dev.set("count", d.count);
    dev.set("interconnect", d.interconnect);
    out.set("device", std::move(dev));
    std::vector<GemvKernelInfo> kernels;
    GS_CUDA(gemvKernelInfo(kernels));
    json::Value gk = json::Value::array();
    for (const auto& k : kernels) {
        json::Value o = json::Value::object();
        o.set("kernel", std::string(k.name));
        o.set("registers", k.registers);
        o.set("blocks_per_sm", k.blocksPerSm);
        gk.push(std::move(o));
    }
    out.set("gemv_kernels", std::move(gk));
    std::vector<SingleGpuFigures> figs(o.repeats);
    for (auto& f : figs)
        GS_TRY(Calibrator::measureSingle(o, Calibrator::Part::MemoryAndLaunch, f));
    for (auto& f : figs)
        GS_TRY(Calibrator::measureSingle(o, Calibrator::Part::Matmul, f));
    json::Value reps = json::Value::array();
    for (const auto& f : figs)
        reps.push(figuresJson(f));
    out.set("single", std::move(reps));
    json::Value a = json::Value::array();
    for (const auto& c : ar)
        a.push(curve(c));
    out.set("allreduce", std::move(a));
    return Status::ok();
}

struct Merger {
    double maxSpread = 0;
    std::vector<std::string> rows;
    // Median over repeats of one figure (`lowest`: the smallest, for host-bound floors that
    // interference only ever raises); records its spread and a table row.
    double take(const std::string& name, const std::vector<double>& v, const char* unit, bool lowest = false)
    {
        const double m = lowest && !v.empty() ? *std::min_element(v.begin(), v.end()) : median(v);
        const double s = spreadPct(v);
        maxSpread = std::max(maxSpread, s);
        std::string each; // every repeat, in order, so an outlier shows which run it was
        for (double x : v) {
            char e[32];
            std::snprintf(e, sizeof e, "%s%.3f", each.empty() ? "" : " ", x);
            each += e;
        }
        char b[256];
        std::snprintf(b, sizeof b, "%-34s %12.3f %-6s %6.2f%%  [%s]", name.c_str(), m, unit, s, each.c_str());
        rows.push_back(b);
        return m;
    }
};

CalibrationProfile merge(const json::Value& r0, uint32_t ranks, Merger& mg)
{
    CalibrationProfile p;
    const json::Value& d = r0["device"];
    p.device.name = d["name"].toString();
    p.device.uuid = d["uuid"].toString();
    p.device.smCount = static_cast<int>(d["sm_count"].toInt());
    p.device.memoryBytes = static_cast<uint64_t>(d["memory_bytes"].toDouble());
    p.device.l2Bytes = static_cast<uint64_t>(d["l2_bytes"].toDouble());
    p.device.smClockMhz = static_cast<int>(d["sm_clock_mhz"].toInt());
    p.device.memoryClockMhz = static_cast<int>(d["memory_clock_mhz"].toInt());
    p.device.count = static_cast<int>(d["count"].toInt());
    for (const auto& k : r0["gemv_kernels"].items())
        p.gemvKernels.push_back({ k["kernel"].toString(), static_cast<int>(k["registers"].toInt()),
            static_cast<int>(k["blocks_per_sm"].toInt()) });
    p.device.interconnect = d["interconnect"].toString();
    const auto& reps = r0["single"].items();
    auto col = [&](const char* key) {
        std::vector<double> v;
        for (const auto& r : reps)
            v.push_back(r[key].toDouble());
        return v;
    };
    p.hbmCopyGbs = mg.take("hbm copy (read+write)", col("copy"), "GB/s");
    p.hbmReadGbs = mg.take("hbm read", col("read"), "GB/s");
    const size_t points = reps.empty() ? 0 : reps[0]["gemv"].size();
    for (size_t i = 0; i < points; ++i) {
        std::vector<double> us;
        for (const auto& r : reps)
            us.push_back(curveFrom(r["gemv"])[i].us);
        const double bytes = curveFrom(reps[0]["gemv"])[i].bytes;
        const double m = mg.take("gemv bf16 " + std::to_string(static_cast<uint64_t>(bytes) >> 20) + " MiB", us, "us");
        p.gemv.push_back({ bytes, m });
    }
    for (const auto& [fmt, v] : reps.empty() ? std::vector<json::Value::Member>() : reps[0]["formats"].members()) {
        std::vector<double> us;
        for (const auto& r : reps)
            us.push_back(curveFrom(r["formats"][fmt])[0].us);
        const double bytes = curveFrom(v)[0].bytes;
        p.gemvFormats.push_back({ fmt, bytes,
            mg.take("gemv " + fmt + " " + std::to_string(static_cast<uint64_t>(bytes) >> 20) + " MiB", us, "us") });
    }
    const size_t variants = reps.empty() ? 0 : reps[0]["variants"].size();
    for (size_t i = 0; i < variants; ++i) {
        std::vector<double> us;
        for (const auto& r : reps)
            us.push_back(r["variants"].at(i).at(2).toDouble());
        const json::Value& v0 = reps[0]["variants"].at(i);
        const double bytes = v0.at(1).toDouble();
        const std::string name = v0.at(0).toString();
        p.gemvVariants.push_back({ name, bytes,
            mg.take("gemv bf16 " + std::to_string(static_cast<uint64_t>(bytes) >> 20) + " MiB " + name, us, "us") });
    }
    // Per-launch copy and read at the GEMV sizes.
    for (const auto& [key, label, out] : { std::tuple { "copies", "copy per launch ", &p.copyPerLaunch },
             std::tuple { "reads", "read per launch ", &p.readPerLaunch } }) {
        const size_t n = reps.empty() ? 0 : reps[0][key].size();
        for (size_t i = 0; i < n; ++i) {
            std::vector<double> us;
            for (const auto& r : reps)
                us.push_back(curveFrom(r[key])[i].us);
            const double bytes = curveFrom(reps[0][key])[i].bytes;
            out->push_back({ bytes,
                mg.take(label + std::to_string(static_cast<uint64_t>(bytes) >> 20) + " MiB", us, "us") });
        }
    }
    // The host-bound launch figures: the lowest repeat (the host's own cost; a busy neighbour or a
    // slow wake-up only adds, and the median of three moved 15 % between runs).
    p.launchEagerUs = mg.take("launch eager (per kernel), lowest", col("eager"), "us", true);
    p.graphFixedUs = mg.take("graph launch fixed, lowest", col("graph_fixed"), "us", true);
    p.graphPerNodeUs = mg.take("graph launch per node", col("graph_node"), "us");
    p.bf16MatmulTflops = mg.take("bf16 matmul (cuBLAS, random)", col("matmul"), "TFLOP/s");
    p.allreduceRanks = static_cast<int>(ranks);
    const auto& ar = r0["allreduce"].items();
    const size_t arPoints = ar.empty() ? 0 : ar[0].size();
    for (size_t i = 0; i < arPoints; ++i) {
        std::vector<double> us;
        for (const auto& rep : ar)
            us.push_back(curveFrom(rep)[i].us);
        const double bytes = curveFrom(ar[0])[i].bytes;
        p.allreduce.push_back({ bytes,
            mg.take("allreduce " + std::to_string(static_cast<uint64_t>(bytes)) + " B x" + std::to_string(ranks), us,
                "us") });
    }
    return p;
}

std::string utcNow()
{
    char b[32];
    const std::time_t t = std::time(nullptr);
    std::tm tm {};
    gmtime_r(&t, &tm);
    std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return b;
}

constexpr int kLaunchProcesses = 2; // besides the main run: three processes in all

bool parseArgs(int argc, char** argv, CalibrateOptions& o, std::string& output, bool& json, int& rc)
{
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool hasValue = i + 1 < argc;
        if (a == "--help" || a == "-h") {
            std::fputs(kUsage, stdout);
            rc = 0;
            return false;
        } else if (a == "--quick") {
            o.quick = true;
        } else if (a == "--json") {
            json = true;
        } else if (a == "--output" && hasValue) {
            output = argv[++i];
        } else if ((a == "--gpus" || a == "--repeats") && hasValue) {
            const long v = std::strtol(argv[++i], nullptr, 10);
            if (v <= 0 || v > 64) {
                std::fprintf(stderr, "gapscope-calibrate: %s needs a number 1..64\n", a.c_str());
                rc = 2;
                return false;
            }
            (a == "--gpus" ? o.gpus : o.repeats) = static_cast<uint32_t>(v);
        } else {
            std::fprintf(stderr, "gapscope-calibrate: unknown or incomplete argument '%s' (see --help)\n", a.c_str());
            rc = 2;
            return false;
        }
    }
    return true;
}

} // namespace

int main(int argc, char** argv)
{
    CalibrateOptions o;
    std::string output = "gapscope-calibration.json";
    bool asJson = false;
    int rc = 0;
    if (!parseArgs(argc, argv, o, output, asJson, rc))
        return rc;
    // Count the GPUs in a child, so this process never initialises CUDA before forking the ranks.
    auto probe = RankGroup::run(1, [](uint32_t, const ncclUniqueId&, json::Value& out) {
        int n = 0;
        GS_CUDA(cudaGetDeviceCount(&n));
        out = json::Value::object();
        out.set("count", n);
        return Status::ok();
    });
    if (!probe) {
        std::fprintf(stderr, "gapscope-calibrate: %s\n", probe.error().c_str());
        return 1;
    }
    const uint32_t ranks = o.gpus ? o.gpus : static_cast<uint32_t>((*probe)[0]["count"].toInt());
    auto res = RankGroup::run(ranks,
        [&](uint32_t rank, const ncclUniqueId& id, json::Value& out) { return rankMain(o, rank, ranks, id, out); });
    if (!res) {
        std::fprintf(stderr, "gapscope-calibrate: %s\n", res.error().c_str());
        return 1;
    }
    Merger mg;
    CalibrationProfile p = merge((*res)[0], ranks, mg);
    // The host-bound launch figures move with the process (eager 3.33 against 3.50 us, each the
    // lowest of three repeats, in two runs on the H200 box): the median over this run's rank 0 and
    // kLaunchProcesses fresh processes on its GPU. The per-node cost stays the main run's: it is
    // GPU-bound and a fresh process reads it low (0.50 against 0.68 us; so does the first repeat of
    // a run), so the fresh processes report it only.
    std::vector<double> eager { p.launchEagerUs }, fixed { p.graphFixedUs }, node { p.graphPerNodeUs };
    for (int i = 0; i < kLaunchProcesses; ++i) {
        auto lr = RankGroup::run(1, [&](uint32_t, const ncclUniqueId&, json::Value& out) {
            GS_CUDA(cudaSetDevice(0));
            SingleGpuFigures f;
            GS_TRY(Calibrator::measureLaunchOnly(o, f));
            out = json::Value::object();
            out.set("eager", f.eagerUs);
            out.set("graph_fixed", f.graphFixedUs);
            out.set("graph_node", f.graphPerNodeUs);
            return Status::ok();
        });
        if (!lr) {
            std::fprintf(stderr, "gapscope-calibrate: launch figures: %s\n", lr.error().c_str());
            return 1;
        }
        eager.push_back((*lr)[0]["eager"].toDouble());
        fixed.push_back((*lr)[0]["graph_fixed"].toDouble());
        node.push_back((*lr)[0]["graph_node"].toDouble());
    }
    const std::string procs = std::to_string(eager.size()) + " processes";
    p.launchEagerUs = mg.take("launch eager, median of " + procs, eager, "us");
    p.graphFixedUs = mg.take("graph launch fixed, median of " + procs, fixed, "us");
    mg.rows.push_back("graph per node in the fresh processes (not used):" + [&] {
        std::string v;
        for (size_t i = 1; i < node.size(); ++i) {
            char b[32];
            std::snprintf(b, sizeof b, " %.3f", node[i]);
            v += b;
        }
        return v + " us";
    }());
    p.created = utcNow();
    p.toolVersion = GAPSCOPE_VERSION;
    p.repeats = static_cast<int>(o.repeats);
    p.maxSpreadPct = mg.maxSpread;
    std::ofstream f(output);
    f << json::write(p.toJson(), 2) << "\n";
    if (!f) {
        std::fprintf(stderr, "gapscope-calibrate: cannot write %s\n", output.c_str());
        return 1;
    }
    if (asJson) {
        std::printf("%s\n", json::write(p.toJson(), 2).c_str());
        return 0;
    }
    std::printf("%s, %d GPU(s), %s; profile written to %s\n", p.device.name.c_str(), p.device.count,
        p.device.interconnect.c_str(), output.c_str());
    std::printf("%-34s %12s %-6s %7s\n", "figure", "median", "unit", "spread");
    for (const auto& r : mg.rows)
        std::printf("%s\n", r.c_str());
    std::printf("max spread between %u repeats: %.2f%%\n", o.repeats, mg.maxSpread);
    return 0;
}
