// SPDX-License-Identifier: MIT
#pragma once

// Test support for the agent tests: writing a known trace file, decoding a file or a chunk stream
// back into plain events, and running an AgentServer or FakeRank on a thread.

#include "capture/agent/agentserver.h"
#include "fakerank.h"
#include "model/format/chunkdecoder.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace gapscope::capture::test {

struct PlainEvent {
    std::string lane; // "host/rank/kind/stream"
    std::string name;
    uint32_t rank = 0;
    int64_t start = 0;
    uint64_t dur = 0;
    bool operator<(const PlainEvent& o) const;
    bool operator==(const PlainEvent& o) const;
};

struct PlainStep {
    uint32_t rank, index;
    int64_t start;
    uint64_t dur;
    uint32_t kind = 0; // pb::StepBlock::Kind
    uint32_t tokens = 0;
};

struct Decoded {
    std::vector<PlainEvent> events; // in stream order
    std::vector<PlainStep> steps;
    pb::FileHeader header;
    std::vector<std::string> warnings;
    uint64_t chunks = 0;
    std::string error;
};

// R ranks x S steps x K kernels on one stream per rank, steps of stepNs, plus a step record per step.
Status writeTestTrace(const std::string& path, int ranks, int steps, int kernels, int64_t stepNs, int64_t t0);

// Decodes a chunk stream (chunks in order) into `out`.
class StreamDecoder {
public:
    Status add(const pb::Chunk& c, Decoded& out);

private:
    format::ChunkDecoder m_dec;
};

Decoded decodeFile(const std::string& path);

// An AgentServer on its own thread.
class AgentThread {
public:
    explicit AgentThread(AgentOptions o);
    ~AgentThread();
    Status start();
    void stop();
    AgentServer& server() { return *m_server; }
    std::string address() const { return "127.0.0.1:" + std::to_string(m_server->port()); }

private:
    std::unique_ptr<AgentServer> m_server;
    std::thread m_thread;
};

class RankThread {
public:
    explicit RankThread(FakeRankOptions o);
    ~RankThread();
    FakeRank& rank() { return *m_rank; }
    void stop();

private:
    std::unique_ptr<FakeRank> m_rank;
    std::thread m_thread;
};

// Raw sockets for hostile-peer tests. readUntilClosed reads until the peer closes `fd` (true; a
// reset counts as closed) or timeoutMs pass (false), appending what arrived to `got`.
bool readUntilClosed(int fd, int timeoutMs, std::string& got);
// The message of the first Error in `bytes` (agent -> client frames), or "" when there is none.
std::string firstErrorMessage(const std::string& bytes);
// A frame with a Register message (protocol version 1, rank -1: the agent numbers it).
std::string registerFrame();
// VmRSS / VmHWM of a process, in KiB (0 when unknown).
uint64_t procStatusKb(long pid, const char* field);

// Polls `pred` every 10 ms up to timeoutMs.
template <typename Pred> bool waitFor(Pred pred, int timeoutMs)
{
    for (int t = 0; t < timeoutMs; t += 10) {
        if (pred())
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return pred();
}

} // namespace gapscope::capture::test
