// SPDX-License-Identifier: MIT
#include "model/format/counterset.h"

#include "model/format/trace.pb.h"

namespace gapscope::format {

const std::string& CounterTraits<pb::Counter>::name(const pb::Counter& c)
{
    return c.name();
}

int32_t CounterTraits<pb::Counter>::rank(const pb::Counter& c)
{
    return c.rank();
}

uint64_t CounterTraits<pb::Counter>::value(const pb::Counter& c)
{
    return c.value();
}

void CounterTraits<pb::Counter>::setValue(pb::Counter& c, uint64_t v)
{
    c.set_value(v);
}

} // namespace gapscope::format
