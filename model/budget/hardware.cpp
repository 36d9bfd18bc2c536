// SPDX-License-Identifier: MIT
#include "model/budget/hardware.h"

#include "model/budget/fieldreader.h"
#include "model/budget/resources.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sys/stat.h>

namespace gapscope::model {

namespace {

constexpr double kBig = 1e9;

std::vector<SizePoint> readPoints(FieldReader& r, const char* key)
{
    std::vector<SizePoint> out;
    const json::Value* arr = r.array(key);
    if (!arr)
        return out;
    if (arr->size() > 10000) {
        r.fail(key, "more than 10000 points");
        return out;
    }
    for (size_t i = 0; i < arr->size(); ++i) {
        FieldReader p(arr->at(i), r.what() + ": " + key + "[" + std::to_string(i) + "]");
        SizePoint pt { p.number("bytes", -1, 0, 1e15), p.number("us", -1, 0, 1e9) };
        if (!p.status().isOk() || pt.bytes < 0 || pt.us < 0) {
            r.fail(std::string(key) + "[" + std::to_string(i) + "]",
                p.status().isOk() ? std::string("needs \"bytes\" and \"us\"") : p.status().message());
            return {};
        }
        out.push_back(pt);
    }
    std::sort(out.begin(), out.end(), [](const SizePoint& a, const SizePoint& b) { return a.bytes < b.bytes; });
    return out;
}

AllReduceTable readAllReduce(const json::Value& v, const std::string& what, Status& status)
{
    FieldReader r(v, what);
    AllReduceTable t;
    t.library = r.string("library", "nccl");
    t.ranks = r.u32("ranks", 0, 0, 1u << 20);
    t.points = readPoints(r, "points");
    t.alphaUs = r.number("alpha_us", 0, 0, kBig);
    t.source = r.string("source");
    if (r.status().isOk() && t.points.empty() && !r.has("alpha_us"))
        r.fail("points", "an allreduce entry needs \"points\" or \"alpha_us\"");
    if (status.isOk() && !r.status().isOk())
        status = r.status();
    return t;
}

void readNotes(const json::Value& doc, HardwareProfile& hw)
{
    for (const char* key : { "source", "notes" }) {
        const json::Value& v = doc[key];
        if (v.isString())
            hw.notes.push_back(v.toString());
        for (size_t i = 0; v.isArray() && i < v.size() && i < 256; ++i)
            if (v.at(i).isString())
                hw.notes.push_back(v.at(i).toString());
    }
}

Status readPreset(const json::Value& doc, const std::string& what, HardwareProfile& hw)
{
    FieldReader r(doc, what);
    hw.name = r.string("name", hw.name);
    hw.displayName = r.string("display_name", hw.name);
    hw.deviceNames = r.strings("device_names", 64);
    hw.smCount = r.u32("sm_count", 0, 0, 100000);
    hw.memoryGb = r.number("memory_gb", 0, 0, 1e6);
    hw.memoryBandwidthGbs = r.number("memory_bandwidth_gbs", 0, 0, 1e7);
    hw.bf16Tflops = r.number("bf16_tflops", 0, 0, 1e6);
    hw.fp8Tflops = r.number("fp8_tflops", 0, 0, 1e6);
    hw.fp4Tflops = r.number("fp4_tflops", 0, 0, 1e6);
    hw.kernelFloorUs = r.number("kernel_floor_us", 0, 0, 1e6);
    if (!r.has("memory_bandwidth_gbs") || hw.memoryBandwidthGbs <= 0)
        r.fail("memory_bandwidth_gbs", "missing or zero");
    if (!r.has("bf16_tflops") || hw.bf16Tflops <= 0)
        r.fail("bf16_tflops", "missing or zero");
    if (const json::Value* ic = r.object("interconnect")) {
        FieldReader i(*ic, what + ": interconnect");
        hw.interconnectKind = i.string("kind", "pcie");
        hw.interconnectGbs = i.number("bandwidth_gbs", 0, 0, 1e7);
        hw.interconnectLatencyUs = i.number("latency_us", 0, 0, 1e6);
        if (!i.status().isOk())
            return i.status();
    }
    if (const json::Value* l = r.object("launch")) {
        FieldReader i(*l, what + ": launch");
        hw.launchEagerUs = i.number("eager_us", hw.launchEagerUs, 0, 1e6);
        hw.graphFixedUs = i.number("graph_fixed_us", hw.graphFixedUs, 0, 1e6);
        hw.graphPerNodeUs = i.number("graph_per_node_us", hw.graphPerNodeUs, 0, 1e6);
        if (!i.status().isOk())
            return i.status();
    }
    if (const json::Value* e = r.object("efficiency")) {
        FieldReader i(*e, what + ": efficiency");
        hw.memoryEfficiency = i.number("memory", hw.memoryEfficiency, 0.01, 1.0);
        hw.computeEfficiency = i.number("compute", hw.computeEfficiency, 0.01, 1.0);
        if (!i.status().isOk())
            return i.status();
    }
    Status st = r.status();
    if (const json::Value* ar = doc.isObject() ? doc.find("allreduce") : nullptr) {
        if (ar->isArray()) {
            for (size_t k = 0; k < ar->size() && k < 64; ++k)
                hw.allreduce.push_back(readAllReduce(ar->at(k), what + ": allreduce[" + std::to_string(k) + "]", st));
        } else if (ar->isObject()) {
            hw.allreduce.push_back(readAllReduce(*ar, what + ": allreduce", st));
        }
    }
    readNotes(doc, hw);
    if (!r.status().isOk())
        return r.status();
    return st;
}

// The datasheet preset that lists `device` among its device_names; empty name when none.
HardwareProfile presetForDevice(const std::string& device)
{
    for (const auto& name : listPresets("hardware")) {
        auto doc = json::parseFile(presetPath("hardware", name));
        if (!doc)
            continue;
        const json::Value& names = doc.value()["device_names"];
        for (const auto& n : names.items())
            if (n.isString() && !device.empty() && n.toString() == device) {
                HardwareProfile hw;
                hw.name = name;
                if (readPreset(doc.value(), name, hw).isOk())
                    return hw;
            }
    }
    return {};
}

void applyCalibrationMeasurements(FieldReader& r, HardwareProfile& hw, const std::string& what)
{
    hw.calibrated = true;
    hw.hbmReadGbs = r.number("hbm_read_gbs", 0, 0, 1e7);
    if (hw.hbmReadGbs <= 0)
        hw.hbmReadGbs = r.number("hbm_copy_gbs", 0, 0, 1e7);
    hw.gemv = readPoints(r, "gemv");
    if (!hw.gemv.empty())
        hw.kernelFloorUs = hw.gemv.front().us;
    hw.measuredBf16Tflops = r.number("bf16_matmul_tflops", 0, 0, 1e6);
    if (const json::Value* l = r.object("launch")) {
        FieldReader i(*l, what + ": launch");
        hw.launchEagerUs = i.number("eager_us", hw.launchEagerUs, 0, 1e6);
        hw.graphFixedUs = i.number("graph_fixed_us", hw.graphFixedUs, 0, 1e6);
        hw.graphPerNodeUs = i.number("graph_per_node_us", hw.graphPerNodeUs, 0, 1e6);
        if (!i.status().isOk())
            r.fail("launch", i.status().message());
    }
    if (const json::Value* ar = r.object("allreduce")) {
        Status st;
        AllReduceTable t = readAllReduce(*ar, what + ": allreduce", st);
        t.source = "measured by gapscope-calibrate";
        if (!st.isOk())
            r.fail("allreduce", st.message());
        else
            hw.allreduce.insert(hw.allreduce.begin(), t);
    }
}

Status readCalibration(const json::Value& doc, const std::string& what, HardwareProfile& hw)
{
    FieldReader r(doc, what);
    int64_t version = int64_t(r.u64("version", 1, 0, 1u << 30));
    if (version != 1)
        return Status::error(
            what + ": calibration profile version " + std::to_string(version) + " is not supported (1)");
    const json::Value* dev = r.object("device");
    std::string device = dev ? (*dev)["name"].toString() : std::string();
    hw = presetForDevice(device);
    if (hw.name.empty()) {
        hw.name = device.empty() ? "calibrated" : device;
        hw.displayName = hw.name;
        hw.notes.push_back("no datasheet preset lists device '" + device + "': the ideal column uses measured figures");
    } else {
        hw.notes.push_back("datasheet ceilings from preset " + hw.name + " (device '" + device + "')");
    }
    applyCalibrationMeasurements(r, hw, what);
    if (dev) {
        FieldReader d(*dev, what + ": device");
        hw.smCount = d.u32("sm_count", hw.smCount, 0, 100000);
        if (hw.interconnectKind.empty())
            hw.interconnectKind = d.string("interconnect", "");
    }
    if (hw.memoryBandwidthGbs <= 0)
        hw.memoryBandwidthGbs = hw.hbmReadGbs;
    if (hw.bf16Tflops <= 0)
        hw.bf16Tflops = hw.measuredBf16Tflops;
    if (hw.memoryBandwidthGbs <= 0 || hw.bf16Tflops <= 0)
        r.fail("hbm_read_gbs",
            "a calibration profile without a matching preset needs hbm_read_gbs and bf16_matmul_tflops");
    hw.origin = "calibration";
    hw.notes.push_back("calibrated " + r.string("created", "?") + ": HBM read "
        + json::write(json::Value(hw.hbmReadGbs), -1) + " GB/s, " + std::to_string(hw.gemv.size())
        + " GEMV points, kernel floor " + json::write(json::Value(hw.kernelFloorUs), -1) + " us");
    return r.status();
}

} // namespace

double HardwareProfile::tflops(MathRate r) const
{
    if (r == MathRate::Fp4 && fp4Tflops > 0)
        return fp4Tflops;
    if (r != MathRate::Bf16 && fp8Tflops > 0)
        return fp8Tflops;
    return bf16Tflops;
}

double HardwareProfile::achievableBandwidthGbs() const
{
    if (calibrated && hbmReadGbs > 0)
        return hbmReadGbs;
    return memoryBandwidthGbs * memoryEfficiency;
}

double HardwareProfile::kernelUs(double bytes) const
{
    double bw = achievableBandwidthGbs();
    double streaming = bw > 0 ? bytes / (bw * 1e3) : 0;
    if (gemv.empty())
        return std::max(kernelFloorUs, streaming);
    if (bytes <= gemv.front().bytes)
        return gemv.front().us;
    for (size_t i = 1; i < gemv.size(); ++i)
        if (bytes <= gemv[i].bytes) {
            const SizePoint &a = gemv[i - 1], &b = gemv[i];
            double f = b.bytes > a.bytes ? (bytes - a.bytes) / (b.bytes - a.bytes) : 1.0;
            return a.us + f * (b.us - a.us);
        }
    return gemv.back().us + (bw > 0 ? (bytes - gemv.back().bytes) / (bw * 1e3) : 0);
}

const AllReduceTable* HardwareProfile::allreduceTable(const std::string& library) const
{
    for (const auto& t : allreduce)
        if (library.empty() || t.library == library)
            return &t;
    return nullptr;
}

double allreduceUs(const AllReduceTable& t, double bytes, uint32_t ranks, double interconnectGbs)
{
    if (ranks <= 1)
        return 0;
    double bwTerm = interconnectGbs > 0 ? 2.0 * (ranks - 1) / ranks / (interconnectGbs * 1e3) : 0; // us per byte
    if (t.points.empty())
        return t.alphaUs + bwTerm * bytes;
    const auto& p = t.points;
    if (bytes <= p.front().bytes)
        return p.front().us;
    for (size_t i = 1; i < p.size(); ++i)
        if (bytes <= p[i].bytes) {
            double f = p[i].bytes > p[i - 1].bytes ? (bytes - p[i - 1].bytes) / (p[i].bytes - p[i - 1].bytes) : 1.0;
            return p[i - 1].us + f * (p[i].us - p[i - 1].us);
        }
    return p.back().us + bwTerm * (bytes - p.back().bytes);
}

Expected<HardwareProfile> parseHardwareProfile(const json::Value& doc, const std::string& what)
{
    HardwareProfile hw;
    Status st;
    if (doc.isObject() && doc["kind"].toString() == "gapscope-calibration") {
        st = readCalibration(doc, what, hw);
    } else {
        hw.origin = "file";
        st = readPreset(doc, what, hw);
    }
    if (!st.isOk())
        return st;
    if (hw.name.empty())
        hw.name = what;
    hw.sourceJson = json::write(doc, -1);
    return hw;
}

Status applyHardwareOverrides(HardwareProfile& hw, const std::string& spec)
{
    struct Key {
        const char* name;
        double HardwareProfile::*field;
        double lo, hi;
    };
    static const Key keys[] = {
        { "memory_bandwidth_gbs", &HardwareProfile::memoryBandwidthGbs, 1e-3, 1e7 },
        { "bf16_tflops", &HardwareProfile::bf16Tflops, 1e-3, 1e6 },
        { "fp8_tflops", &HardwareProfile::fp8Tflops, 0, 1e6 },
        { "fp4_tflops", &HardwareProfile::fp4Tflops, 0, 1e6 },
        { "memory_efficiency", &HardwareProfile::memoryEfficiency, 0.01, 1 },
        { "compute_efficiency", &HardwareProfile::computeEfficiency, 0.01, 1 },
        { "kernel_floor_us", &HardwareProfile::kernelFloorUs, 0, 1e6 },
        { "eager_us", &HardwareProfile::launchEagerUs, 0, 1e6 },
        { "graph_fixed_us", &HardwareProfile::graphFixedUs, 0, 1e6 },
        { "graph_per_node_us", &HardwareProfile::graphPerNodeUs, 0, 1e6 },
        { "interconnect_gbs", &HardwareProfile::interconnectGbs, 0, 1e7 },
        { "hbm_read_gbs", &HardwareProfile::hbmReadGbs, 0, 1e7 },
    };
    size_t pos = 0;
    while (pos < spec.size()) {
        size_t end = spec.find(',', pos);
        std::string entry = spec.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
        pos = end == std::string::npos ? spec.size() : end + 1;
        if (entry.empty())
            continue;
        size_t eq = entry.find('=');
        std::string name = entry.substr(0, eq);
        const Key* key = nullptr;
        for (const auto& k : keys)
            if (name == k.name)
                key = &k;
        if (!key) {
            std::string all;
            for (const auto& k : keys)
                all += (all.empty() ? "" : ", ") + std::string(k.name);
            return Status::error("--hw-set: unknown figure '" + name + "' (" + all + ")");
        }
        char* stop = nullptr;
        std::string text = eq == std::string::npos ? std::string() : entry.substr(eq + 1);
        double v = std::strtod(text.c_str(), &stop);
        if (text.empty() || *stop != '\0' || !std::isfinite(v) || v < key->lo || v > key->hi)
            return Status::error("--hw-set: " + name + " needs a number in [" + json::write(json::Value(key->lo), -1)
                + ", " + json::write(json::Value(key->hi), -1) + "], got '" + text + "'");
        hw.*(key->field) = v;
        hw.notes.push_back("edited: " + name + " = " + json::write(json::Value(v), -1));
    }
    return Status::ok();
}

Expected<HardwareProfile> loadHardwareProfile(const std::string& fileOrPreset)
{
    struct stat st { };
    std::string path = fileOrPreset;
    bool preset = false;
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
        path = presetPath("hardware", fileOrPreset);
        if (path.empty())
            return Status::error("hardware '" + fileOrPreset
                + "': no such file and no such preset (presets: " + joinNames(listPresets("hardware")) + ")");
        preset = true;
    }
    auto doc = json::parseFile(path);
    if (!doc)
        return doc.status();
    std::string stem = path.substr(path.find_last_of('/') + 1);
    if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".json") == 0)
        stem.resize(stem.size() - 5);
    auto hw = parseHardwareProfile(doc.value(), preset ? fileOrPreset : path);
    if (hw && preset)
        hw->origin = "preset";
    if (hw && hw->name == path)
        hw->name = stem;
    return hw;
}

} // namespace gapscope::model
