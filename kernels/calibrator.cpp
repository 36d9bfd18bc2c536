// SPDX-License-Identifier: MIT
#include "kernels/calibrator.h"
#include "kernels/cudastatus.h"
#include "kernels/gemv.h"
#include "kernels/ops.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <dlfcn.h>
#include <fstream>
#include <functional>
#include <sched.h>
#include <sstream>
#include <string>

namespace gapscope::kernels {

namespace {

using model::Precision;

double nowUs()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

// The q-quantile (0..1, nearest rank) of `v`; 0 for none.
double quantileOf(std::vector<double> v, double q)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

// The q-quantile (default the median) over `reps` of the event-timed duration of `body` (in
// microseconds), after `warm` runs.
Status timeEvents(cudaStream_t s, int warm, int reps, const std::function<Status()>& body, double& us, double q = 0.5)
{
    cudaEvent_t a, b;
    GS_CUDA(cudaEventCreate(&a));
    GS_CUDA(cudaEventCreate(&b));
    std::vector<double> t;
    Status st = Status::ok();
    for (int i = 0; st && i < warm + reps; ++i) {
        cudaEventRecord(a, s);
        st = body();
        cudaEventRecord(b, s);
        if (st && cudaEventSynchronize(b) != cudaSuccess)
            st = Status::error("event synchronisation failed while timing");
        float ms = 0;
        if (st && i >= warm && cudaEventElapsedTime(&ms, a, b) == cudaSuccess)
            t.push_back(ms * 1e3);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    GS_TRY(st);
    us = quantileOf(t, q);
    return Status::ok();
}

// Per-launch time of `launches` operations captured back to back into one CUDA graph (enqueue(i)
// issues operation i on `s`): the median replay time over the repeats, divided by `launches`.
Status timeGraphPerLaunch(cudaStream_t s, uint32_t launches, const CalibrateOptions& o, const char* what, double& us,
    const std::function<cudaError_t(uint32_t)>& enqueue)
{
    cudaGraph_t g = nullptr;
    GS_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (uint32_t i = 0; i < launches; ++i) {
        const cudaError_t e = enqueue(i);
        if (e != cudaSuccess) {
            cudaStreamEndCapture(s, &g);
            if (g)
                cudaGraphDestroy(g);
            return Status::error(std::string(what) + ": " + cudaGetErrorString(e));
        }
    }
    GS_CUDA(cudaStreamEndCapture(s, &g));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t ie = cudaGraphInstantiate(&exec, g, 0);
    cudaGraphDestroy(g);
    GS_CUDA(ie);
    double total = 0;
    Status st = timeEvents(
        s, 2, o.quick ? 2 : 9,
        [&] {
            GS_CUDA(cudaGraphLaunch(exec, s));
            return Status::ok();
        },
        total);
    cudaGraphExecDestroy(exec);
    GS_TRY(st);
    us = total / launches;
    return Status::ok();
}

struct Buffers {
    uint8_t* big = nullptr; // copy source / read probe / GEMV weights
    uint8_t* dst = nullptr;
    uint64_t bigBytes = 0;
    ~Buffers()
    {
        if (big)
            cudaFree(big);
        if (dst)
            cudaFree(dst);
    }
};

Status measureCopyRead(cudaStream_t s, Buffers& b, int sms, const CalibrateOptions& o, SingleGpuFigures& f)
{
    const uint64_t n = o.quick ? (256ull << 20) : (2ull << 30);
    double us = 0;
    GS_TRY(timeEvents(
        s, 5, o.quick ? 3 : 20,
        [&] {
            GS_CUDA(cudaMemcpyAsync(b.dst, b.big, n, cudaMemcpyDeviceToDevice, s));
            return Status::ok();
        },
        us));
    f.copyGbs = 2.0 * n / (us * 1e3);
    unsigned long long* sink = reinterpret_cast<unsigned long long*>(b.dst + n);
    GS_TRY(timeEvents(
        s, 3, o.quick ? 3 : 20,
        [&] {
            GS_CUDA(launchReadProbe(b.big, n, sink, sms, s));
            return Status::ok();
        },
        us));
    f.readGbs = n / (us * 1e3);
    return Status::ok();
}

// Per-launch time of a GEMV streaming `bytes` of weights in `prec` at K = 4096, batch 1: a CUDA
// graph of back-to-back launches over rotating copies (at least 512 MiB in all), replayed.
struct GemvVariant {
    uint32_t schedule = 0; // GemvParams::schedule
    bool pdl = false;
    uint32_t inflight = 0; // GemvParams::inflight
    uint32_t blocksPerSm = 0; // GemvParams::blocksPerSm
};

Status gemvPoint(cudaStream_t s, Buffers& b, Precision prec, uint64_t bytes, const CalibrateOptions& o, double& us,
    GemvVariant variant = {})
{
    const uint32_t K = 4096;
    WeightLayout probe;
    WeightLayout::make(prec, 1, K, probe, nullptr);
    const uint64_t rows = std::max<uint64_t>(1, bytes / probe.bytes());
    WeightLayout l;
    if (!WeightLayout::make(prec, rows, K, l, nullptr))
        return Status::error("gemv calibration: bad layout");
    const uint64_t stride = (l.valueBytes + 255) / 256 * 256 + (l.scaleBytes + 255) / 256 * 256;
    const uint64_t copies = std::min<uint64_t>(std::max<uint64_t>(1, (512ull << 20) / stride), b.bigBytes / stride);
    if (copies == 0)
        return Status::error("gemv calibration: " + std::to_string(bytes) + " bytes do not fit the buffer");
    for (uint64_t c = 0; c < copies; ++c)
        GS_CUDA(
            launchFillWeights(l, b.big + c * stride, b.big + c * stride + (l.valueBytes + 255) / 256 * 256, c + 1, s));
    const uint32_t launches = static_cast<uint32_t>(std::max<uint64_t>(copies, o.quick ? 4 : 20));
    GemvParams p;
    p.x = reinterpret_cast<const uint16_t*>(b.dst);
    p.xLd = K;
    p.y = reinterpret_cast<uint16_t*>(b.dst + (1 << 20));
    p.yLd = rows;
    p.rows = static_cast<uint32_t>(rows);
    p.cols = K;
    p.auxOffset = l.auxOffset;
    p.schedule = variant.schedule;
    p.pdl = variant.pdl;
    p.inflight = variant.inflight;
    p.blocksPerSm = variant.blocksPerSm;
    return timeGraphPerLaunch(s, launches, o, "gemv calibration launch", us, [&](uint32_t i) {
        const uint64_t c = i % copies;
        p.values = b.big + c * stride;
        p.scales = l.scaleBytes ? p.values + (l.valueBytes + 255) / 256 * 256 : nullptr;
        return launchGemv(prec, p, s);
    });
}

// Per-launch time of a device-to-device cudaMemcpyAsync of `bytes`, measured like gemvPoint (a
// graph of back-to-back copies over rotating sources and destinations): the copy baseline at the
// GEMV's own size.
Status copyPoint(cudaStream_t s, Buffers& b, uint64_t bytes, const CalibrateOptions& o, double& us)
{
    const uint64_t copies = std::min<uint64_t>(std::max<uint64_t>(1, (512ull << 20) / bytes), (2ull << 30) / bytes);
    const uint32_t launches = static_cast<uint32_t>(std::max<uint64_t>(copies, o.quick ? 4 : 20));
    return timeGraphPerLaunch(s, launches, o, "copy calibration", us, [&](uint32_t i) {
        const uint64_t c = i % copies;
        return cudaMemcpyAsync(b.dst + c * bytes, b.big + c * bytes, bytes, cudaMemcpyDeviceToDevice, s);
    });
}

// Per-launch time of the streaming read kernel over `bytes`, measured like gemvPoint: what a launch
// of that size can read at all, the GEMV's own ceiling at its size.
Status readPoint(cudaStream_t s, Buffers& b, int sms, uint64_t bytes, const CalibrateOptions& o, double& us)
{
    const uint64_t copies = std::min<uint64_t>(std::max<uint64_t>(1, (512ull << 20) / bytes), b.bigBytes / bytes);
    const uint32_t launches = static_cast<uint32_t>(std::max<uint64_t>(copies, o.quick ? 4 : 20));
    auto* sink = reinterpret_cast<unsigned long long*>(b.dst + (o.quick ? (256ull << 20) : (2ull << 30)));
    return timeGraphPerLaunch(s, launches, o, "read calibration", us,
        [&](uint32_t i) { return launchReadProbe(b.big + (i % copies) * bytes, bytes, sink, sms, s); });
}

Status measureGemv(cudaStream_t s, Buffers& b, int sms, const CalibrateOptions& o, SingleGpuFigures& f)
{
    // The curve and the formats: the GEMV as the sim launches it (default schedule, PDL).
    const GemvVariant production { 0, true, 0, 0 };
    const uint64_t maxBytes = o.quick ? (64ull << 20) : (1ull << 30);
    for (uint64_t bytes = 1ull << 20; bytes <= maxBytes; bytes *= 2) {
        double us = 0;
        GS_TRY(gemvPoint(s, b, Precision::Bf16, bytes, o, us, production));
        f.gemv.push_back({ static_cast<double>(bytes), us });
    }
    const Precision all[] = { Precision::Bf16, Precision::Fp16, Precision::Fp8, Precision::Fp8Block128,
        Precision::Nvfp4, Precision::Mxfp4, Precision::Int4G128 };
    const uint64_t fb = o.quick ? (32ull << 20) : (256ull << 20);
    for (Precision p : all) {
        double us = 0;
        GS_TRY(gemvPoint(s, b, p, fb, o, us, production));
        f.formats.push_back({ model::toString(p), static_cast<double>(fb), us });
    }
    // The bf16 GEMV under each schedule (one warp-row per block slot; persistent, the default for
    // whole-warp rows; persistent with programmatic dependent launch between the launches), and
    // the copy at the same sizes measured the same way.
    const struct {
        const char* name;
        GemvVariant v;
    } variants[] = { { "grid", { 1, false, 0, 0 } }, { "persistent", { 2, false, 0, 0 } },
        { "persistent-4-in-flight", { 2, false, 4, 0 } }, { "persistent-2-in-flight", { 2, false, 2, 0 } },
        { "persistent+pdl", { 2, true, 0, 0 } }, { "persistent-4-in-flight+pdl", { 2, true, 4, 0 } },
        { "persistent-4-in-flight+pdl-2bps", { 2, true, 4, 2 } },
        { "persistent-4-in-flight+pdl-3bps", { 2, true, 4, 3 } }, { "persistent+pdl-2bps", { 2, true, 0, 2 } },
        { "sweep", { 3, false, 0, 0 } }, { "sweep+pdl", { 3, true, 0, 0 } }, { "sweep-16k+pdl", { 3, true, 4, 0 } },
        { "sweep-persistent", { 4, false, 0, 0 } }, { "sweep-persistent+pdl", { 4, true, 0, 0 } },
        { "persistent-lean", { 5, false, 0, 0 } }, { "persistent-lean+pdl", { 5, true, 0, 0 } },
        { "persistent-lean-4-in-flight+pdl", { 5, true, 4, 0 } } };
    for (uint64_t bytes : { 8ull << 20, 64ull << 20, 256ull << 20 }) {
        for (const auto& v : variants) {
            double us = 0;
            GS_TRY(gemvPoint(s, b, Precision::Bf16, bytes, o, us, v.v));
            f.variants.push_back({ v.name, static_cast<double>(bytes), us });
        }
        double us = 0;
        GS_TRY(copyPoint(s, b, bytes, o, us));
        f.copies.push_back({ static_cast<double>(bytes), us });
        GS_TRY(readPoint(s, b, sms, bytes, o, us));
        f.reads.push_back({ static_cast<double>(bytes), us });
    }
    return Status::ok();
}

// The CPUs local to the current GPU (/sys/bus/pci/devices/<bus id>/local_cpulist); empty when
// unknown.
std::vector<int> gpuLocalCpus()
{
    int dev = 0;
    char bus[32] = {};
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetPCIBusId(bus, sizeof(bus), dev) != cudaSuccess)
        return {};
    std::string id = bus;
    for (char& c : id)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::ifstream in("/sys/bus/pci/devices/" + id + "/local_cpulist");
    std::string list;
    std::vector<int> cpus;
    if (!std::getline(in, list))
        return cpus;
    std::stringstream ss(list);
    std::string range;
    while (std::getline(ss, range, ',')) {
        int a = -1, b = -1;
        if (std::sscanf(range.c_str(), "%d-%d", &a, &b) == 2)
            for (int c = a; c <= b && c - a < 4096; ++c)
                cpus.push_back(c);
        else if (a >= 0)
            cpus.push_back(a);
    }
    return cpus;
}

// Up to four CPUs the calling thread may run on, spread over those local to the GPU (else the one
// it runs on, or -1): the candidates for the host-bound launch figures.
std::vector<int> launchCpus()
{
    cpu_set_t allowed;
    std::vector<int> local, out;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0)
        for (int c : gpuLocalCpus())
            if (c >= 0 && c < CPU_SETSIZE && CPU_ISSET(c, &allowed))
                local.push_back(c);
    for (size_t i = 0; i < 4 && i < local.size(); ++i)
        out.push_back(local[i * local.size() / std::min<size_t>(4, local.size())]);
    if (out.empty())
        out.push_back(sched_getcpu()); // -1 (pin nothing) where unknown
    return out;
}

// Keeps the calling thread on CPU `cpu` while alive (restores the old mask; a negative cpu pins
// nothing). The host-bound launch figures then follow chosen cores instead of wherever the
// scheduler put the thread.
class PinToOneCpu {
public:
    explicit PinToOneCpu(int cpu)
    {
        m_ok = cpu >= 0 && sched_getaffinity(0, sizeof(m_old), &m_old) == 0;
        if (m_ok) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            sched_setaffinity(0, sizeof(one), &one);
        }
    }
    ~PinToOneCpu()
    {
        if (m_ok)
            sched_setaffinity(0, sizeof(m_old), &m_old);
    }
    PinToOneCpu(const PinToOneCpu&) = delete;
    PinToOneCpu& operator=(const PinToOneCpu&) = delete;

private:
    cpu_set_t m_old;
    bool m_ok = false;
};

// Host-bound figures take a low quantile of many samples: the launch path's own cost, not the
// interrupts and neighbours that land on some of the samples (the median moved 20 % between runs).
constexpr double kHostQuantile = 0.2;

// Host clock from cudaGraphLaunch to the end of cudaStreamSynchronize for a graph of `nodes`
// empty kernels: the kHostQuantile of `reps` replays after 10 warm ones.
Status graphReplayUs(cudaStream_t s, int nodes, int reps, double& us)
{
    cudaGraph_t g = nullptr;
    GS_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < nodes; ++i)
        launchEmptyKernel(s);
    GS_CUDA(cudaStreamEndCapture(s, &g));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t ie = cudaGraphInstantiate(&exec, g, 0);
    cudaGraphDestroy(g);
    GS_CUDA(ie);
    std::vector<double> t;
    for (int i = 0; i < reps + 10; ++i) {
        const double t0 = nowUs();
        cudaGraphLaunch(exec, s);
        cudaStreamSynchronize(s);
        if (i >= 10)
            t.push_back(nowUs() - t0);
    }
    cudaGraphExecDestroy(exec);
    GS_CUDA(cudaGetLastError());
    us = quantileOf(t, kHostQuantile);
    return Status::ok();
}

// Graph replay of 1 and 10 empty kernels on the calling thread's core (two passes; the first warms
// the launch path up): the host figures the fixed graph cost comes from.
Status smallGraphsUs(cudaStream_t s, const CalibrateOptions& o, double& one, double& ten)
{
    for (int pass = 0; pass < 2; ++pass) {
        GS_TRY(graphReplayUs(s, 1, o.quick ? 10 : 300, one));
        GS_TRY(graphReplayUs(s, 10, o.quick ? 10 : 300, ten));
    }
    return Status::ok();
}

Status measureLaunch(cudaStream_t s, const CalibrateOptions& o, SingleGpuFigures& f)
{
    // Host-bound figures on the fastest of a few GPU-local cores, each figure its own best core:
    // one core alone moved the eager cost 3.0-4.5 us between runs of the same box, and the graph's
    // fixed cost read 6.1 us in one process against 5.5-5.7 us in the others.
    const int n = o.quick ? 200 : 1000;
    int best = -1;
    f.eagerUs = 0;
    std::vector<std::pair<double, double>> small; // (1 node, 10 nodes) per core
    for (int cpu : launchCpus()) {
        PinToOneCpu pin(cpu);
        double us = 0;
        GS_TRY(timeEvents(
            s, 10, o.quick ? 5 : 41,
            [&] {
                for (int i = 0; i < n; ++i)
                    GS_CUDA(launchEmptyKernel(s));
                return Status::ok();
            },
            us, kHostQuantile));
        if (best < 0 || us / n < f.eagerUs) {
            f.eagerUs = us / n;
            best = cpu;
        }
        double one = 0, ten = 0;
        GS_TRY(smallGraphsUs(s, o, one, ten));
        small.emplace_back(one, ten);
    }
    PinToOneCpu pin(best);
    // Per node: the slope between the two largest graphs (1000 and 300 nodes) on the best eager
    // core; fixed: what is left of the two smallest (1 and 10 nodes) after their nodes, averaged,
    // on the core where that is least. (The intercept of a least-squares line through all sizes
    // moved 6-15 % between runs on the H200: 0.1 % of noise at 1000 nodes alone shifts it by about
    // 0.5 us.)
    double big[2] = { 0, 0 };
    for (int pass = 0; pass < 2; ++pass) { // the first pass warms the launch path up
        GS_TRY(graphReplayUs(s, 300, o.quick ? 10 : 300, big[0]));
        GS_TRY(graphReplayUs(s, 1000, o.quick ? 10 : 300, big[1]));
    }
    f.graphPerNodeUs = (big[1] - big[0]) / 700.0;
    f.graphFixedUs = 0;
    for (size_t i = 0; i < small.size(); ++i) {
        const double fixed = ((small[i].first - f.graphPerNodeUs) + (small[i].second - 10 * f.graphPerNodeUs)) / 2;
        if (i == 0 || fixed < f.graphFixedUs)
            f.graphFixedUs = fixed;
    }
    return Status::ok();
}

Status measureMatmul(cudaStream_t s, Buffers& b, const CalibrateOptions& o, SingleGpuFigures& f)
{
    const int n = o.quick ? 4096 : 8192;
    const uint64_t elems = uint64_t(n) * n;
    uint16_t* A = reinterpret_cast<uint16_t*>(b.big);
    uint16_t* B = A + elems;
    uint16_t* C = B + elems;
    GS_CUDA(launchFillBf16(A, elems, 1.f, 11, s));
    GS_CUDA(launchFillBf16(B, elems, 1.f, 12, s));
    cublasHandle_t h = nullptr;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
        return Status::error("cublasCreate failed");
    cublasSetStream(h, s);
    const float alpha = 1.f, beta = 0.f;
    double us = 0;
    Status st = timeEvents(
        s, 3, o.quick ? 3 : 10,
        [&] {
            const cublasStatus_t r = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, A, CUDA_R_16BF, n, B,
                CUDA_R_16BF, n, &beta, C, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
            return r == CUBLAS_STATUS_SUCCESS ? Status::ok()
                                              : Status::error("cublasGemmEx failed: " + std::to_string(r));
        },
        us);
    cublasDestroy(h);
    GS_TRY(st);
    f.matmulTflops = 2.0 * n * double(n) * n / (us * 1e6);
    return Status::ok();
}

std::string uuidText(const cudaUUID_t& u)
{
    const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
    char s[64];
    std::snprintf(s, sizeof s, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
        b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    return s;
}

// NVLink state through NVML, loaded at run time (no link-time dependency on the driver library).
bool hasActiveNvlink(int device)
{
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_LAZY);
    if (!lib)
        return false;
    using InitFn = int (*)();
    using HandleFn = int (*)(unsigned, void**);
    using LinkFn = int (*)(void*, unsigned, int*);
    auto init = reinterpret_cast<InitFn>(dlsym(lib, "nvmlInit_v2"));
    auto handle = reinterpret_cast<HandleFn>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
    auto link = reinterpret_cast<LinkFn>(dlsym(lib, "nvmlDeviceGetNvLinkState"));
    bool active = false;
    void* dev = nullptr;
    if (init && handle && link && init() == 0 && handle(static_cast<unsigned>(device), &dev) == 0)
        for (unsigned l = 0; l < 18 && !active; ++l) {
            int on = 0;
            active = link(dev, l, &on) == 0 && on == 1;
        }
    dlclose(lib);
    return active;
}

} // namespace

Status Calibrator::deviceInfo(int device, CalibrationProfile::Device& d)
{
    cudaDeviceProp p {};
    GS_CUDA(cudaGetDeviceProperties(&p, device));
    int count = 0, clock = 0, mem = 0, peer = 0;
    GS_CUDA(cudaGetDeviceCount(&count));
    cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, device);
    cudaDeviceGetAttribute(&mem, cudaDevAttrMemoryClockRate, device);
    if (count > 1)
        cudaDeviceCanAccessPeer(&peer, device, (device + 1) % count);
    d.name = p.name;
    d.uuid = uuidText(p.uuid);
    d.smCount = p.multiProcessorCount;
    d.memoryBytes = p.totalGlobalMem;
    d.l2Bytes = static_cast<uint64_t>(p.l2CacheSize);
    d.smClockMhz = clock / 1000;
    d.memoryClockMhz = mem / 1000;
    d.count = count;
    d.interconnect = count < 2 ? "none" : hasActiveNvlink(device) ? "nvlink" : "pcie";
    return Status::ok();
}

Status Calibrator::measureSingle(const CalibrateOptions& o, Part part, SingleGpuFigures& f)
{
    cudaStream_t s = nullptr;
    GS_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int dev = 0, sms = 0;
    GS_CUDA(cudaGetDevice(&dev));
    GS_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    Buffers b;
    b.bigBytes = o.quick ? (512ull << 20) : (3ull << 30);
    Status st = Status::ok();
    if (cudaMalloc(&b.big, b.bigBytes) != cudaSuccess || cudaMalloc(&b.dst, (2ull << 30) + (8 << 20)) != cudaSuccess)
        st = Status::error("calibration: cannot allocate the measurement buffers");
    if (st && cudaMemset(b.big, 1, b.bigBytes) != cudaSuccess)
        st = Status::error("calibration: cudaMemset failed");
    if (st && launchFillBf16(reinterpret_cast<uint16_t*>(b.dst), 4096, 1.f, 3, s) != cudaSuccess)
        st = Status::error("calibration: fill failed");
    const bool memory = part == Part::MemoryAndLaunch;
    if (st && memory)
        st = measureCopyRead(s, b, sms, o, f);
    if (st && memory)
        st = measureGemv(s, b, sms, o, f);
    if (st && memory)
        st = measureLaunch(s, o, f);
    if (st && !memory)
        st = measureMatmul(s, b, o, f);
    cudaStreamDestroy(s);
    return st;
}

Status Calibrator::measureLaunchOnly(const CalibrateOptions& o, SingleGpuFigures& f)
{
    cudaStream_t s = nullptr;
    GS_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const Status st = measureLaunch(s, o, f);
    cudaStreamDestroy(s);
    return st;
}

Status Calibrator::measureAllReduce(const CalibrateOptions& o, uint32_t rank, uint32_t ranks, const ncclUniqueId& id,
    std::vector<std::vector<CurvePoint>>& repeats)
{
    if (ranks < 2)
        return Status::ok();
    ncclComm_t comm = nullptr;
    GS_NCCL(ncclCommInitRank(&comm, static_cast<int>(ranks), id, static_cast<int>(rank)));
    cudaStream_t s = nullptr;
    void* buf = nullptr;
    const uint64_t maxBytes = o.quick ? (1ull << 20) : (64ull << 20);
    Status st = Status::ok();
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess || cudaMalloc(&buf, maxBytes) != cudaSuccess
        || cudaMemset(buf, 0, maxBytes) != cudaSuccess)
        st = Status::error("allreduce calibration: stream or buffer allocation failed");
    // Each size: a CUDA graph of back-to-back AllReduces (as a decode step replays them), timed per replay.
    for (uint32_t rep = 0; st && rep < o.repeats; ++rep) {
        std::vector<CurvePoint> pts;
        for (uint64_t bytes = 256; st && bytes <= maxBytes; bytes *= 4) {
            const int iters = bytes >= (16ull << 20) ? 10 : 100;
            cudaGraph_t g = nullptr;
            cudaGraphExec_t exec = nullptr;
            if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess)
                st = Status::error("allreduce calibration: capture failed");
            for (int i = 0; st && i < iters; ++i)
                if (ncclAllReduce(buf, buf, bytes / 2, ncclBfloat16, ncclSum, comm, s) != ncclSuccess)
                    st = Status::error("allreduce calibration: ncclAllReduce failed");
            if (cudaStreamEndCapture(s, &g) != cudaSuccess || (st && cudaGraphInstantiate(&exec, g, 0) != cudaSuccess))
                st = Status::error("allreduce calibration: graph capture or instantiation failed");
            if (g)
                cudaGraphDestroy(g);
            double us = 0;
            if (st)
                st = timeEvents(
                    s, 2, o.quick ? 3 : 11,
                    [&] {
                        GS_CUDA(cudaGraphLaunch(exec, s));
                        return Status::ok();
                    },
                    us);
            if (exec)
                cudaGraphExecDestroy(exec);
            pts.push_back({ static_cast<double>(bytes), us / iters });
        }
        repeats.push_back(pts);
    }
    if (buf)
        cudaFree(buf);
    if (s)
        cudaStreamDestroy(s);
    ncclCommDestroy(comm);
    return st;
}

} // namespace gapscope::kernels
