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

    RankHub(Events& events, std::string host, uint32_t maxRanks);
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
    std::vector<RankRecord> records() const; // registered and alive, by rank

private:
    struct Conn;
    void serviceOne(Conn& c, short revents);
    void handleFrame(Conn& c, std::string_view payload);
    void onRegister(Conn& c, const wire::Register& reg);
    void closeConn(Conn& c, const std::string& reason);

    Events& m_events;
    std::string m_host;
    uint32_t m_maxRanks;
    std::string m_path;
    UniqueFd m_listen;
    std::vector<std::unique_ptr<Conn>> m_conns;
};

} // namespace gapscope::capture
