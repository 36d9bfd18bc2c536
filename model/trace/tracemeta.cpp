// SPDX-License-Identifier: MIT
#include "model/trace/tracemeta.h"

#include <tuple>

namespace gapscope::model {

const char* toString(CopyKind kind)
{
    switch (kind) {
    case CopyKind::HtoD:
        return "HtoD";
    case CopyKind::DtoH:
        return "DtoH";
    case CopyKind::DtoD:
        return "DtoD";
    case CopyKind::HtoH:
        return "HtoH";
    case CopyKind::PtoP:
        return "PtoP";
    case CopyKind::Unknown:
        break;
    }
    return "copy";
}

const char* toString(StepSource source)
{
    switch (source) {
    case StepSource::File:
        return "file";
    case StepSource::Nvtx:
        return "nvtx";
    case StepSource::Graph:
        return "graph";
    case StepSource::Anchor:
        return "anchor";
    case StepSource::Auto:
        return "auto";
    case StepSource::Forward:
        return "forward";
    case StepSource::Engine:
        return "engine";
    case StepSource::Unknown:
        break;
    }
    return "none";
}

const char* toString(StepKind kind)
{
    switch (kind) {
    case StepKind::Decode:
        return "decode";
    case StepKind::Prefill:
        return "prefill";
    case StepKind::Mixed:
        return "mixed";
    case StepKind::Draft:
        return "draft";
    case StepKind::Verify:
        return "verify";
    case StepKind::Unknown:
        break;
    }
    return "unknown";
}

bool parseStepKind(const std::string& text, StepKind& out)
{
    for (size_t k = 0; k < kStepKinds; ++k)
        if (text == toString(StepKind(k))) {
            out = StepKind(k);
            return true;
        }
    return false;
}

const RankInfo* TraceHeader::rank(uint32_t r) const
{
    for (const RankInfo& x : ranks)
        if (x.rank == r)
            return &x;
    return nullptr;
}

bool TraceHeader::empty() const
{
    return toolVersion.empty() && createdUnixNs == 0 && clockDomain.empty() && source.empty() && !hasCapture
        && hosts.empty() && gpus.empty() && ranks.empty() && counters.empty() && metadata.empty() && startNs == 0
        && endNs == 0 && warnings.empty();
}

Counter statCounter(format::Stat stat, int32_t rank, uint64_t value)
{
    return statCounter(stat, rank, value, format::statInfo(stat).description);
}

Counter statCounter(format::Stat stat, int32_t rank, uint64_t value, std::string detail)
{
    const format::StatInfo& info = format::statInfo(stat);
    return Counter { info.name, rank, value, format::toString(info.severity), std::move(detail) };
}

bool Annotation::operator==(const Annotation& o) const
{
    return std::tie(id, startNs, endNs, laneKey, text, colorRgba, author, createdUnixNs)
        == std::tie(o.id, o.startNs, o.endNs, o.laneKey, o.text, o.colorRgba, o.author, o.createdUnixNs);
}

bool BudgetSettings::operator==(const BudgetSettings& o) const
{
    return std::tie(model, modelConfigJson, hardware, hardwareJson, precision, tp, ep, batch, context, engine,
               allreduceUs, cudaGraphs, draftTokens, acceptanceLength, promptTokens, extra)
        == std::tie(o.model, o.modelConfigJson, o.hardware, o.hardwareJson, o.precision, o.tp, o.ep, o.batch,
            o.context, o.engine, o.allreduceUs, o.cudaGraphs, o.draftTokens, o.acceptanceLength, o.promptTokens, o.extra);
}

} // namespace gapscope::model
