// SPDX-License-Identifier: MIT
#include "capture/inject/gpuidentity.h"

#include "capture/inject/channels.h"
#include "capture/inject/rankenv.h"

#include <cuda.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace gapscope::capture::inject {

namespace {

std::string readFile(const char* path, size_t limit)
{
    std::ifstream in(path, std::ios::binary);
    std::string s(limit, '\0');
    in.read(&s[0], std::streamsize(limit));
    s.resize(size_t(in.gcount()));
    return s;
}

std::string uuidText(const CUuuid& u)
{
    char buf[64];
    const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
    std::snprintf(buf, sizeof(buf), "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
        b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    return buf;
}

int attribute(CUdevice dev, CUdevice_attribute a)
{
    int v = 0;
    return cuDeviceGetAttribute(&v, a, dev) == CUDA_SUCCESS ? v : 0;
}

std::string driverVersionText()
{
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  ..."
    std::string s = readFile("/proc/driver/nvidia/version", 512);
    const auto at = s.find("Kernel Module");
    if (at == std::string::npos)
        return {};
    std::istringstream in(s.substr(at + 13));
    std::string v;
    in >> v;
    return v;
}

} // namespace

GpuIdentity::GpuIdentity(uint32_t cuptiVersion)
    : m_cuptiVersion(cuptiVersion)
{
}

int GpuIdentity::activeDevice()
{
    int count = 0;
    if (cuDeviceGetCount(&count) != CUDA_SUCCESS)
        return -1;
    const RankEnv env = rankFromEnvironment();
    int first = -1;
    for (int i = 0; i < count; ++i) {
        CUdevice dev = 0;
        unsigned int flags = 0;
        int active = 0;
        if (cuDeviceGet(&dev, i) != CUDA_SUCCESS || cuDevicePrimaryCtxGetState(dev, &flags, &active) != CUDA_SUCCESS)
            continue;
        if (!active)
            continue;
        if (i == env.localRank)
            return i;
        if (first < 0)
            first = i;
    }
    return first;
}

bool GpuIdentity::ready()
{
    return activeDevice() >= 0;
}

RankIdentity GpuIdentity::read()
{
    RankIdentity id;
    const RankEnv env = rankFromEnvironment();
    Channels& ch = channels();
    id.rank = env.rank >= 0 ? env.rank : ch.ncclRank.load();
    id.worldSize = uint32_t(env.worldSize > 0 ? env.worldSize : std::max(0, ch.ncclWorldSize.load()));
    id.localRank = env.localRank;
    id.pid = uint32_t(getpid());
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    id.host = host;
    id.processName = readFile("/proc/self/comm", 64);
    while (!id.processName.empty() && (id.processName.back() == '\n' || id.processName.back() == 0))
        id.processName.pop_back();
    id.commandLine = readFile("/proc/self/cmdline", 512);
    for (char& c : id.commandLine)
        if (c == 0)
            c = ' ';

    const int ordinal = activeDevice();
    CUdevice dev = 0;
    if (ordinal >= 0 && cuDeviceGet(&dev, ordinal) == CUDA_SUCCESS) {
        pb::GpuInfo& g = id.gpu;
        char name[256] = {};
        cuDeviceGetName(name, sizeof(name), dev);
        g.set_name(name);
        CUuuid uuid {};
        if (cuDeviceGetUuid_v2(&uuid, dev) == CUDA_SUCCESS)
            g.set_uuid(uuidText(uuid));
        g.set_host(id.host);
        g.set_device_index(uint32_t(ordinal));
        g.set_sm_count(uint32_t(attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)));
        size_t mem = 0;
        if (cuDeviceTotalMem(&mem, dev) == CUDA_SUCCESS)
            g.set_memory_bytes(mem);
        g.set_sm_clock_mhz(uint32_t(attribute(dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000));
        g.set_memory_clock_mhz(uint32_t(attribute(dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) / 1000));
        g.set_cc_major(uint32_t(attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)));
        g.set_cc_minor(uint32_t(attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)));
        const int bus = attribute(dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
        g.set_memory_bus_width_bits(uint32_t(bus));
        // DDR: two transfers per memory clock.
        g.set_peak_memory_bandwidth_gbs(
            2.0 * attribute(dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) * 1e3 * bus / 8 / 1e9);
        char pci[64] = {};
        if (cuDeviceGetPCIBusId(pci, sizeof(pci), dev) == CUDA_SUCCESS)
            g.set_pci_bus_id(pci);
    }
    pb::VersionInfo& v = id.versions;
    v.set_cupti_api_version(m_cuptiVersion);
    int driver = 0;
    if (cuDriverGetVersion(&driver) == CUDA_SUCCESS)
        v.set_cuda_driver_version(driver);
    v.set_nccl_profiler_plugin_version(uint32_t(std::max(0, ch.ncclPluginVersion.load())));
    v.set_driver_version(driverVersionText());
    return id;
}

} // namespace gapscope::capture::inject
