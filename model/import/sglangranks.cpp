// SPDX-License-Identifier: MIT
#include "model/import/sglangranks.h"

#include <algorithm>
#include <string>

namespace gapscope::model::importer {

namespace {

// Reads the digits at s[i...]; false when there are none (or too many to be a rank).
bool digits(std::string_view s, size_t& i, int& out)
{
    size_t start = i;
    long v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i - start < 6)
        v = v * 10 + (s[i++] - '0');
    if (i == start || (i < s.size() && s[i] >= '0' && s[i] <= '9'))
        return false;
    out = int(v);
    return true;
}

int* slot(SglangRanks::Label& l, std::string_view kind)
{
    if (kind == "TP")
        return &l.tp;
    if (kind == "DP")
        return &l.dp;
    if (kind == "PP")
        return &l.pp;
    if (kind == "EP")
        return &l.ep;
    return nullptr;
}

} // namespace

bool SglangRanks::parsePid(std::string_view pid, Label& label, std::string_view& rest)
{
    const size_t close = pid.find("] ");
    if (pid.size() < 4 || pid[0] != '[' || close == std::string_view::npos)
        return false;
    const std::string_view inside = pid.substr(1, close - 1);
    Label l;
    size_t i = 0;
    while (i < inside.size()) {
        int* s = i + 2 <= inside.size() ? slot(l, inside.substr(i, 2)) : nullptr;
        if (!s || *s >= 0)
            return false;
        i += 2;
        if (!digits(inside, i, *s))
            return false;
        if (i < inside.size() && inside[i++] != '-')
            return false;
        if (i == inside.size() && inside.back() == '-')
            return false;
    }
    if (l.tp < 0 && l.ep < 0 && l.dp < 0 && l.pp < 0)
        return false;
    label = l;
    rest = pid.substr(close + 2);
    return true;
}

bool SglangRanks::parseFileName(std::string_view path, Label& label)
{
    const size_t slash = path.find_last_of('/');
    const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
    Label l;
    for (std::string_view kind : { "TP", "DP", "PP", "EP" }) {
        // The last "KIND-<digits>" in the name that starts a word (after '-', '_', '.' or the start).
        for (size_t p = name.rfind(std::string(kind) + "-"); p != std::string_view::npos;
             p = p ? name.rfind(std::string(kind) + "-", p - 1) : std::string_view::npos) {
            if (p > 0 && name[p - 1] != '-' && name[p - 1] != '_' && name[p - 1] != '.')
                continue;
            size_t i = p + 3;
            int v;
            if (digits(name, i, v) && (i == name.size() || name[i] == '-' || name[i] == '.' || name[i] == '_')) {
                *slot(l, kind) = v;
                break;
            }
        }
    }
    if (l.tp < 0 && l.ep < 0)
        return false;
    label = l;
    return true;
}

std::vector<uint32_t> SglangRanks::ranksOf(const std::vector<Label>& labels)
{
    int nTp = 1, nPp = 1;
    for (const Label& l : labels) {
        nTp = std::max(nTp, (l.tp >= 0 ? l.tp : std::max(0, l.ep)) + 1);
        nPp = std::max(nPp, std::max(0, l.pp) + 1);
    }
    std::vector<uint32_t> out;
    for (const Label& l : labels) {
        const int tp = l.tp >= 0 ? l.tp : std::max(0, l.ep);
        out.push_back(uint32_t(tp + nTp * (std::max(0, l.pp) + nPp * std::max(0, l.dp))));
    }
    return out;
}

} // namespace gapscope::model::importer
