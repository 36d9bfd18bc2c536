// SPDX-License-Identifier: MIT
#pragma once

// Endpoint: a parsed agent address. "HOST:PORT", "[V6]:PORT", "HOST" (default port 7433), ":PORT"
// (loopback). isLoopback() decides whether the agent may listen there without a token.

#include "model/base/status.h"

#include <cstdint>
#include <string>

namespace gapscope::capture {

struct Endpoint {
    std::string host = "127.0.0.1";
    uint16_t port = 7433;

    static Expected<Endpoint> parse(const std::string& text, uint16_t defaultPort = 7433);
    std::string toString() const;
    // 127.0.0.0/8, ::1, "localhost". Names are not resolved: anything else counts as remote.
    bool isLoopback() const;
};

} // namespace gapscope::capture
