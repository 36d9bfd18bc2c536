// SPDX-License-Identifier: MIT
#pragma once

// preparePrivateFolder: makes sure a folder the agent creates files in (the rank socket's folder,
// the capture output folder) cannot be used to redirect those files, as OpenSSH checks the paths of
// its keys. The folder is created (mode 0700, parents too) when missing; then
//   - every symbolic link on the given path must belong to this user or to root,
//   - every folder above it (after links are resolved) must belong to this user or to root and must
//     not be writable by others unless it is sticky (/tmp),
//   - the folder itself must belong to this user and must not be writable by group or others.
// Otherwise another user could swap a folder or plant a link and make the agent (often root) create
// or overwrite any file. Errors name the path, its owner and its mode.

#include "model/base/status.h"

#include <string>

namespace gapscope::capture {

// `purpose` completes "refusing to put <purpose> there" in the error text.
Status preparePrivateFolder(const std::string& dir, const std::string& purpose);

// "0755" for st_mode's permission bits (sticky included).
std::string modeText(unsigned mode);

} // namespace gapscope::capture
