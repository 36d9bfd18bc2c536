// SPDX-License-Identifier: MIT
#pragma once

// RankHub: the agent's rank side: the Unix socket, one connection per rank process, registration
// (Register -> Welcome, rank numbers for processes that do not know theirs), liveness (Ping/Pong,
// Goodbye, a closed socket = the process exited or crashed) and the connection's state as clients
// see it. Everything about captures goes to the Events interface: ChunkData frames unparsed (the
// merge thread parses them), other messages parsed.
//
// A malformed or oversized frame, a first message that is not Register, or a rank that does not read
// what the agent sends closes that rank's connection only.
//
// Limits (a process of the agent's user can connect; a buggy or hostile one must not take the agent
// down or lock ranks out): before Register a frame may have kMaxRankRegisterFrameBytes; a connection
// that has not registered within `registerTimeoutNs` is closed, and at most `maxUnregistered` of
// them are kept (the oldest goes first when another arrives); `maxRanks` registered connections;
// the receive buffers of all connections together stay within `inputBudgetBytes` (plus the growth
// of one buffer in one read): when a read would go over it, idle buffers are given back first, then
// the connection holding the largest unfinished frame is closed (`budgetDrops()`), and a connection is not read while
// there is no room (its bytes wait in the socket). No limit makes the agent wait or abort.
//
// Threading: the agent's I/O thread only.

#include "capture/agent/peerconnection.h"
#include "capture/agent/rankrecord.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

struct pollfd;

namespace gapscope::capture {

class RankHub {
public:
    class Events {
    public:
        virtual ~Events() = default;
        virtual void rankMessage(RankRecord& rank, const wire::RankToAgent& msg) = 0;
        virtual void rankChunk(const RankRecord& rank, std::string_view payload) = 0; // serialized RankToAgent
        virtual void rankGone(const RankRecord& rank, const std::string& reason) = 0;
    };

    struct Limits {
        uint32_t maxRanks = 256;
        uint32_t maxUnregistered = 32;
        int64_t registerTimeoutNs = 5'000'000'000;
        size_t inputBudgetBytes = size_t(256) << 20;
    };

    RankHub(Events& events, std::string host, Limits limits);
    ~RankHub();

    Status listen(const std::string& socketPath);
    const std::string& socketPath() const { return m_path; }
    int listenFd() const { return m_listen.get(); }
    void accept(uint32_t& nextId);

    // One pollfd per connection, in order; service() takes the same entries back after poll().
    void appendPollFds(std::vector<pollfd>& fds) const;
    void service(const pollfd* fds, size_t count);

    void send(uint32_t connId, const wire::AgentToRank& msg);
    void close(uint32_t connId, const std::string& reason);
    void goodbyeAll(const std::string& reason);
    void reap();
    // Closes connections that did not register in time (call periodically).
    void expire(int64_t nowNs);
    std::vector<RankRecord> records() const; // registered and alive, by rank
    size_t inputBytes() const { return m_inputBytes; } // receive buffers, all connections
    uint64_t budgetDrops() const { return m_budgetDrops; }
    uint64_t unregisteredDrops() const { return m_unregisteredDrops; }

private:
    struct Conn;
    void serviceOne(Conn& c, short revents);
    void handleFrame(Conn& c, std::string_view payload);
    void onRegister(Conn& c, const wire::Register& reg);
    void closeConn(Conn& c, const std::string& reason);
    // Room for a read of up to `want` bytes within the input budget (0: none now); may close `c`.
    size_t makeRoom(size_t want);
    size_t countInputBytes() const;

    Events& m_events;
    std::string m_host;
    Limits m_limits;
    size_t m_inputBytes = 0;
    uint64_t m_budgetDrops = 0;
    uint64_t m_unregisteredDrops = 0;
    std::string m_path;
    UniqueFd m_listen;
    std::vector<std::unique_ptr<Conn>> m_conns;
};

} // namespace gapscope::capture
