// SPDX-License-Identifier: MIT
#pragma once

// AgentOptions: everything gapscope-agent can be told (command line -> AgentServer).

#include <cstdint>
#include <string>

namespace gapscope::capture {

struct AgentOptions {
    std::string listen = "127.0.0.1:7433"; // TCP for clients; port 0 picks a free one
    std::string tokenFile; // required unless listening on loopback
    std::string token; // loaded from tokenFile
    std::string socketPath; // rank socket; empty: defaultAgentSocketPath()
    bool rankSocket = true; // false in replay mode unless asked
    std::string outputDir; // capture files; empty: /tmp/gapscope-$UID/captures
    std::string portFile; // write the bound TCP port here once listening
    std::string host; // host name recorded in files; empty: gethostname()

    std::string replayFile; // --replay FILE
    double replaySpeed = 1.0; // 0: as fast as possible

    size_t mergeQueueBytes = 48u << 20; // rank data waiting for the merge thread
    size_t clientQueueBytes = 16u << 20; // stream data waiting for one client before its stream is cut
    uint32_t chunkEvents = 65536;
    uint32_t flushIntervalMs = 10; // live latency vs chunk size
    int zstdLevel = 3;
    double armTimeoutS = 30;
    double finishTimeoutS = 10; // wait this long for ranks to deliver their last data
    int64_t alignLeadMs = 100; // StartRecording must reach every rank before this much time
    uint32_t maxClients = 32; // authenticated clients
    uint32_t maxUnauthenticated = 16; // clients before a valid Hello (the oldest makes room)
    double handshakeTimeoutS = 5; // a client's valid Hello, a rank's Register must come within this
    uint32_t maxRanks = 256; // registered rank connections
    uint32_t maxUnregistered = 32; // rank connections before Register (the oldest makes room)
    size_t rankInputBytes = size_t(256) << 20; // receive buffers of all rank connections (32 MiB at least)
};

} // namespace gapscope::capture
