// SPDX-License-Identifier: MIT
#include "model/import/kinetometadata.h"

#include "model/import/decimal.h"

#include <simdjson.h>

namespace gapscope::model::importer {

namespace {
int64_t intOf(simdjson::dom::element e, std::string_view key, int64_t fallback = 0)
{
    int64_t v = fallback;
    double d = 0;
    if (e[key].get_int64().get(v) == simdjson::SUCCESS)
        return v;
    if (e[key].get_double().get(d) == simdjson::SUCCESS)
        return static_cast<int64_t>(d);
    return fallback;
}

std::string strOf(simdjson::dom::element e, std::string_view key)
{
    std::string_view s;
    return e[key].get_string().get(s) == simdjson::SUCCESS ? std::string(s) : std::string();
}
} // namespace

KinetoMetadata::KinetoMetadata(StagedTrace& out, uint16_t process)
    : m_out(out)
    , m_process(process)
{
}

void KinetoMetadata::apply(std::string_view key, std::string_view json)
{
    while (
        !json.empty() && (json.front() == ' ' || json.front() == '\n' || json.front() == '\r' || json.front() == '\t'))
        json.remove_prefix(1);
    while (!json.empty() && (json.back() == ' ' || json.back() == '\n' || json.back() == '\r' || json.back() == '\t'))
        json.remove_suffix(1);
    int64_t v = 0;
    auto& versions = m_out.process(m_process).versions;
    if (key == "baseTimeNanoseconds") {
        if (parseInteger(json, v)) {
            m_out.timeOffsetNs = v;
            m_out.absoluteClock = v > 0;
        }
    } else if (key == "deviceProperties") {
        deviceProperties(json);
    } else if (key == "distributedInfo") {
        distributedInfo(json);
    } else if (key == "cuda_driver_version" && parseInteger(json, v)) {
        versions.cudaDriverVersion = static_cast<int32_t>(v);
    } else if (key == "cuda_runtime_version" && parseInteger(json, v)) {
        versions.cudaRuntimeVersion = static_cast<int32_t>(v);
    } else if (key == "cupti_version" && parseInteger(json, v)) {
        versions.cuptiApiVersion = static_cast<uint32_t>(v);
    }
    const bool scalar = !json.empty() && json.front() != '{' && json.front() != '[';
    if (scalar && json.size() <= 256) {
        std::string text(json);
        if (text.size() >= 2 && text.front() == '"' && text.back() == '"')
            text = text.substr(1, text.size() - 2);
        m_out.metadata["kineto." + std::string(key)] = text;
    }
}

void KinetoMetadata::deviceProperties(std::string_view json)
{
    simdjson::dom::parser parser;
    simdjson::padded_string text(json);
    simdjson::dom::array devices;
    if (parser.parse(text).get_array().get(devices) != simdjson::SUCCESS) {
        m_out.count(format::Stat::ImportBadMetadata, "deviceProperties is not an array of objects");
        return;
    }
    for (simdjson::dom::element d : devices) {
        if (!d.is_object())
            continue;
        GpuInfo g;
        g.deviceIndex = static_cast<uint32_t>(intOf(d, "id"));
        g.name = strOf(d, "name");
        g.memoryBytes = static_cast<uint64_t>(intOf(d, "totalGlobalMem"));
        g.smCount = static_cast<uint32_t>(intOf(d, "numSms"));
        g.ccMajor = static_cast<uint32_t>(intOf(d, "computeMajor"));
        g.ccMinor = static_cast<uint32_t>(intOf(d, "computeMinor"));
        m_out.gpus.push_back(std::move(g));
    }
}

void KinetoMetadata::distributedInfo(std::string_view json)
{
    simdjson::dom::parser parser;
    simdjson::padded_string text(json);
    simdjson::dom::element info;
    if (parser.parse(text).get(info) != simdjson::SUCCESS || !info.is_object()) {
        m_out.count(format::Stat::ImportBadMetadata, "distributedInfo is not an object");
        return;
    }
    auto& p = m_out.process(m_process);
    const int64_t rank = intOf(info, "rank", -1);
    if (rank >= 0)
        p.rank = static_cast<uint32_t>(rank);
    p.worldSize = static_cast<uint32_t>(std::max<int64_t>(0, intOf(info, "world_size")));
    const std::string nccl = strOf(info, "nccl_version");
    if (!nccl.empty())
        p.versions.ncclVersion = nccl;
    const std::string backend = strOf(info, "backend");
    if (!backend.empty())
        m_out.metadata["kineto.distributed_backend"] = backend;
}

} // namespace gapscope::model::importer
