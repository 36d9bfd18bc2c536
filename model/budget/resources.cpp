// SPDX-License-Identifier: MIT
#include "model/budget/resources.h"

#include <algorithm>
#include <cstdlib>
#include <dirent.h>
#include <sys/stat.h>

#ifndef GAPSCOPE_RESOURCE_DIR
#define GAPSCOPE_RESOURCE_DIR "resources"
#endif

namespace gapscope::model {

namespace {
bool exists(const std::string& path)
{
    struct stat st { };
    return stat(path.c_str(), &st) == 0;
}

bool validName(const std::string& name)
{
    if (name.empty() || name.size() > 128)
        return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_'
            || c == '.';
    }) && name.find("..") == std::string::npos;
}
} // namespace

std::string resourceDir()
{
    if (const char* env = std::getenv("GAPSCOPE_RESOURCES"); env && *env)
        return env;
    if (exists(GAPSCOPE_RESOURCE_DIR))
        return GAPSCOPE_RESOURCE_DIR;
    return "../share/gapscope/resources";
}

std::string presetPath(const std::string& kind, const std::string& name)
{
    if (!validName(name))
        return {};
    std::string path = resourceDir() + "/" + kind + "/" + name + ".json";
    return exists(path) ? path : std::string();
}

std::vector<std::string> listPresets(const std::string& kind)
{
    std::vector<std::string> names;
    std::string dir = resourceDir() + "/" + kind;
    if (DIR* d = opendir(dir.c_str())) {
        while (dirent* e = readdir(d)) {
            std::string n = e->d_name;
            if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0)
                names.push_back(n.substr(0, n.size() - 5));
        }
        closedir(d);
    }
    std::sort(names.begin(), names.end());
    return names;
}

std::string joinNames(const std::vector<std::string>& names, const char* sep)
{
    std::string out;
    for (size_t i = 0; i < names.size(); ++i)
        out += (i ? sep : "") + names[i];
    return out.empty() ? std::string("none") : out;
}

} // namespace gapscope::model
