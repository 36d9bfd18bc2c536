// SPDX-License-Identifier: MIT
#include "kernels/calibrationprofile.h"

#include <algorithm>
#include <cmath>

namespace gapscope::kernels {

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double spreadPct(std::vector<double> v)
{
    if (v.size() < 2)
        return 0;
    const double med = median(v);
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return med > 0 ? (*hi - *lo) / med * 100.0 : 0;
}

double interpolateUs(const std::vector<CurvePoint>& c, double bytes)
{
    if (c.empty() || bytes <= 0)
        return 0;
    if (c.size() == 1 || bytes <= c.front().bytes)
        return c.front().us; // below the smallest point the launch floor dominates
    if (bytes >= c.back().bytes) // extrapolate at the bandwidth of the last segment's end
        return c.back().us * bytes / c.back().bytes;
    auto hi = std::lower_bound(c.begin(), c.end(), bytes, [](const CurvePoint& p, double b) { return p.bytes < b; });
    auto lo = hi - 1;
    const double t = std::log(bytes / lo->bytes) / std::log(hi->bytes / lo->bytes);
    return std::exp(std::log(lo->us) + t * (std::log(hi->us) - std::log(lo->us)));
}

double CalibrationProfile::gemvUs(double bytes) const
{
    if (!gemv.empty())
        return interpolateUs(gemv, bytes);
    return hbmReadGbs > 0 ? bytes / (hbmReadGbs * 1e3) : 0;
}

double CalibrationProfile::allreduceUs(double bytes) const
{
    if (allreduce.empty())
        return 0;
    if (bytes <= allreduce.front().bytes)
        return allreduce.front().us;
    if (bytes >= allreduce.back().bytes)
        return allreduce.back().us * bytes / allreduce.back().bytes;
    return interpolateUs(allreduce, bytes);
}

double CalibrationProfile::kernelFloorUs() const
{
    return gemv.empty() ? 0 : gemv.front().us;
}

// Points as [{bytes, us, gbs}]; gbs counts `bytesMoved` times the bytes (1: read, 2: read and
// written, as hbm_copy_gbs; 0: no gbs).
static json::Value curveJson(const std::vector<CurvePoint>& c, double bytesMoved)
{
    json::Value a = json::Value::array();
    for (const auto& p : c) {
        json::Value o = json::Value::object();
        o.set("bytes", static_cast<uint64_t>(p.bytes));
        o.set("us", p.us);
        if (bytesMoved > 0)
            o.set("gbs", p.us > 0 ? bytesMoved * p.bytes / (p.us * 1e3) : 0.0);
        a.push(std::move(o));
    }
    return a;
}

// Named points as [{<key>: name, bytes, us, gbs}].
static json::Value namedJson(const std::vector<FormatPoint>& c, const char* key)
{
    json::Value a = json::Value::array();
    for (const auto& p : c) {
        json::Value o = json::Value::object();
        o.set(key, p.format);
        o.set("bytes", static_cast<uint64_t>(p.bytes));
        o.set("us", p.us);
        o.set("gbs", p.us > 0 ? p.bytes / (p.us * 1e3) : 0.0);
        a.push(std::move(o));
    }
    return a;
}

json::Value CalibrationProfile::toJson() const
{
    json::Value j = json::Value::object();
    j.set("kind", "gapscope-calibration");
    j.set("version", 1);
    j.set("created", created);
    j.set("tool_version", toolVersion);
    json::Value d = json::Value::object();
    d.set("name", device.name);
    d.set("uuid", device.uuid);
    d.set("sm_count", device.smCount);
    d.set("memory_bytes", device.memoryBytes);
    d.set("l2_bytes", device.l2Bytes);
    d.set("sm_clock_mhz", device.smClockMhz);
    d.set("memory_clock_mhz", device.memoryClockMhz);
    d.set("count", device.count);
    d.set("interconnect", device.interconnect);
    j.set("device", std::move(d));
    j.set("hbm_copy_gbs", hbmCopyGbs);
    j.set("hbm_read_gbs", hbmReadGbs);
    j.set("gemv", curveJson(gemv, 1));
    j.set("gemv_formats", namedJson(gemvFormats, "format"));
    j.set("gemv_variants", namedJson(gemvVariants, "schedule"));
    j.set("copy_per_launch", curveJson(copyPerLaunch, 2));
    j.set("read_per_launch", curveJson(readPerLaunch, 1));
    json::Value gk = json::Value::array();
    for (const auto& k : gemvKernels) {
        json::Value o = json::Value::object();
        o.set("kernel", k.kernel);
        o.set("registers", k.registers);
        o.set("blocks_per_sm", k.blocksPerSm);
        gk.push(std::move(o));
    }
    j.set("gemv_kernels", std::move(gk));
    json::Value l = json::Value::object();
    l.set("eager_us", launchEagerUs);
    l.set("graph_fixed_us", graphFixedUs);
    l.set("graph_per_node_us", graphPerNodeUs);
    j.set("launch", std::move(l));
    json::Value ar = json::Value::object();
    ar.set("library", "nccl");
    ar.set("ranks", allreduceRanks);
    ar.set("points", curveJson(allreduce, 0));
    j.set("allreduce", std::move(ar));
    j.set("bf16_matmul_tflops", bf16MatmulTflops);
    j.set("repeats", repeats);
    j.set("max_spread_pct", maxSpreadPct);
    return j;
}

static Status readCurve(const json::Value& a, const std::string& where, std::vector<CurvePoint>& out)
{
    if (!a.isArray())
        return Status::error(where + ": expected an array of {bytes, us}");
    for (size_t i = 0; i < a.size(); ++i) {
        const json::Value& p = a.at(i);
        const double b = p["bytes"].toDouble(-1), us = p["us"].toDouble(-1);
        if (!(b > 0) || !(us > 0))
            return Status::error(where + "[" + std::to_string(i) + "]: bytes and us must be positive numbers");
        out.push_back({ b, us });
    }
    std::sort(out.begin(), out.end(), [](const CurvePoint& x, const CurvePoint& y) { return x.bytes < y.bytes; });
    return Status::ok();
}

Expected<CalibrationProfile> CalibrationProfile::fromJson(const json::Value& j, const std::string& what)
{
    if (!j.isObject() || j["kind"].toString() != "gapscope-calibration")
        return Status::error(what + ": not a gapscope calibration profile (\"kind\" must be \"gapscope-calibration\")");
    CalibrationProfile p;
    p.created = j["created"].toString();
    p.toolVersion = j["tool_version"].toString();
    const json::Value& d = j["device"];
    p.device.name = d["name"].toString();
    p.device.uuid = d["uuid"].toString();
    p.device.interconnect = d["interconnect"].toString();
    p.device.smCount = static_cast<int>(d["sm_count"].toInt());
    p.device.smClockMhz = static_cast<int>(d["sm_clock_mhz"].toInt());
    p.device.memoryClockMhz = static_cast<int>(d["memory_clock_mhz"].toInt());
    p.device.count = static_cast<int>(d["count"].toInt());
    p.device.memoryBytes = static_cast<uint64_t>(d["memory_bytes"].toDouble());
    p.device.l2Bytes = static_cast<uint64_t>(d["l2_bytes"].toDouble());
    p.hbmCopyGbs = j["hbm_copy_gbs"].toDouble();
    p.hbmReadGbs = j["hbm_read_gbs"].toDouble();
    if (Status s = readCurve(j["gemv"], what + ": gemv", p.gemv); !s)
        return s;
    for (const auto& f : j["gemv_formats"].items())
        p.gemvFormats.push_back({ f["format"].toString(), f["bytes"].toDouble(), f["us"].toDouble() });
    for (const auto& f : j["gemv_variants"].items())
        p.gemvVariants.push_back({ f["schedule"].toString(), f["bytes"].toDouble(), f["us"].toDouble() });
    for (const auto& f : j["copy_per_launch"].items())
        p.copyPerLaunch.push_back({ f["bytes"].toDouble(), f["us"].toDouble() });
    for (const auto& f : j["read_per_launch"].items())
        p.readPerLaunch.push_back({ f["bytes"].toDouble(), f["us"].toDouble() });
    for (const auto& k : j["gemv_kernels"].items())
        p.gemvKernels.push_back({ k["kernel"].toString(), static_cast<int>(k["registers"].toInt()),
            static_cast<int>(k["blocks_per_sm"].toInt()) });
    const json::Value& l = j["launch"];
    p.launchEagerUs = l["eager_us"].toDouble();
    p.graphFixedUs = l["graph_fixed_us"].toDouble();
    p.graphPerNodeUs = l["graph_per_node_us"].toDouble();
    p.allreduceRanks = static_cast<int>(j["allreduce"]["ranks"].toInt());
    if (j["allreduce"].contains("points"))
        if (Status s = readCurve(j["allreduce"]["points"], what + ": allreduce.points", p.allreduce); !s)
            return s;
    p.bf16MatmulTflops = j["bf16_matmul_tflops"].toDouble();
    p.repeats = static_cast<int>(j["repeats"].toInt());
    p.maxSpreadPct = j["max_spread_pct"].toDouble();
    if (!(p.hbmReadGbs > 0) && p.gemv.empty())
        return Status::error(what + ": needs hbm_read_gbs or a gemv curve");
    return p;
}

Expected<CalibrationProfile> CalibrationProfile::load(const std::string& path)
{
    auto v = json::parseFile(path);
    if (!v)
        return v.status();
    return fromJson(*v, path);
}

} // namespace gapscope::kernels
