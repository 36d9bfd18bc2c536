// SPDX-License-Identifier: MIT
#include "model/format/stats.h"

#include "model/format/trace.pb.h"

namespace gapscope::format {

const char* toString(Severity s)
{
    switch (s) {
    case Severity::Info:
        return "info";
    case Severity::Warning:
        return "warning";
    case Severity::Error:
        return "error";
    case Severity::DataLoss:
        return "data_loss";
    }
    return "info";
}

Severity parseSeverity(std::string_view s)
{
    for (Severity v : { Severity::Warning, Severity::Error, Severity::DataLoss })
        if (s == toString(v))
            return v;
    return Severity::Info;
}

Severity severityOf(const pb::Counter& c)
{
    return parseSeverity(c.severity());
}

pb::Counter makeCounter(Stat stat, int32_t rank, uint64_t value)
{
    return makeCounter(stat, rank, value, statInfo(stat).description);
}

pb::Counter makeCounter(Stat stat, int32_t rank, uint64_t value, std::string detail)
{
    const StatInfo& info = statInfo(stat);
    pb::Counter c;
    c.set_name(info.name);
    c.set_rank(rank);
    c.set_value(value);
    c.set_severity(toString(info.severity));
    c.set_detail(std::move(detail));
    return c;
}

} // namespace gapscope::format
