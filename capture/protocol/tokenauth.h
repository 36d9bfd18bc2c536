// SPDX-License-Identifier: MIT
#pragma once

// Client authentication with a shared token. The token lives in a file readable only by its owner
// (created with a fresh random token when missing); clients send its contents in Hello. Comparison
// takes the same time whatever the input, so the token cannot be guessed byte by byte.

#include "model/base/status.h"

#include <string>

namespace gapscope::capture {

// Reads the token (surrounding whitespace trimmed). When the file does not exist and `create` is
// set, writes a new random token (32 bytes from /dev/urandom, hex) with mode 0600 and returns it.
// Refuses, as ssh does for keys, a file that is not a regular file, belongs to another user or can
// be read or written by group or others (the error names the owner or the mode).
Expected<std::string> loadToken(const std::string& path, bool create);
// Constant-time equality (time depends only on the expected token's length).
bool tokenMatches(const std::string& expected, const std::string& given);

} // namespace gapscope::capture
