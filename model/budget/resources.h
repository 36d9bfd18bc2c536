// SPDX-License-Identifier: MIT
#pragma once

// Where the bundled presets live (resources/models/*.json, resources/hardware/*.json) and how a
// preset name maps to a file. The folder is, in order: $GAPSCOPE_RESOURCES, the source tree's
// resources/ recorded at build time, or ../share/gapscope/resources next to the executable's
// working directory. Thread-safe (reads the environment and the file system only).

#include <string>
#include <vector>

namespace gapscope::model {

std::string resourceDir();
// Path of resources/<kind>/<name>.json when it exists, else "". `kind`: "models" or "hardware".
std::string presetPath(const std::string& kind, const std::string& name);
// Sorted preset names of a kind (file stems).
std::vector<std::string> listPresets(const std::string& kind);
std::string joinNames(const std::vector<std::string>& names, const char* sep = ", ");

} // namespace gapscope::model
