// SPDX-License-Identifier: MIT
#include "model/trace/budgetcomponent.h"

namespace gapscope::model {

const char* toString(Component c)
{
    size_t i = static_cast<size_t>(c);
    return i < kComponentCount ? kComponents[i].name : "other";
}

bool parseComponent(const std::string& s, Component& out)
{
    for (const auto& c : kComponents)
        if (s == c.name) {
            out = c.id;
            return true;
        }
    return false;
}

std::string precisionComponentList()
{
    std::string list;
    for (const auto& c : kComponents)
        if (c.hasPrecision)
            list += (list.empty() ? "" : ", ") + std::string(c.name);
    return list;
}

} // namespace gapscope::model
