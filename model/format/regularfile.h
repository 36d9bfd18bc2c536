// SPDX-License-Identifier: MIT
#pragma once

// checkRegularFile: the one check every trace opener makes before it opens a path: the path must
// name a readable regular file. A FIFO with no writer would block open() forever, a directory or a
// device is never a trace, and an unreadable file should say so rather than "not a trace".
// Messages read "PATH: what" ("trace.json: permission denied", "traces/: is a directory").

#include "model/base/status.h"

#include <string>

namespace gapscope::format {

Status checkRegularFile(const std::string& path);

} // namespace gapscope::format
