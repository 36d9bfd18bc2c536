// SPDX-License-Identifier: MIT
#include "capture/protocol/endpoint.h"

#include <arpa/inet.h>
#include <cstdlib>

namespace gapscope::capture {

static bool parsePort(const std::string& s, uint16_t& out)
{
    if (s.empty() || s.size() > 5 || s.find_first_not_of("0123456789") != std::string::npos)
        return false;
    const long v = std::strtol(s.c_str(), nullptr, 10);
    if (v < 0 || v > 65535)
        return false;
    out = uint16_t(v);
    return true;
}

Expected<Endpoint> Endpoint::parse(const std::string& text, uint16_t defaultPort)
{
    Endpoint e;
    e.port = defaultPort;
    std::string host = text, port;
    if (!text.empty() && text[0] == '[') {
        const auto close = text.find(']');
        if (close == std::string::npos)
            return Status::error("address '" + text + "': missing ']'");
        host = text.substr(1, close - 1);
        if (close + 1 < text.size()) {
            if (text[close + 1] != ':')
                return Status::error("address '" + text + "': expected ':PORT' after ']'");
            port = text.substr(close + 2);
        }
    } else if (const auto colon = text.rfind(':'); colon != std::string::npos) {
        if (text.find(':') != colon)
            return Status::error("address '" + text + "': write IPv6 addresses as [ADDR]:PORT");
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
    }
    if (!port.empty() || (text.size() && text.back() == ':'))
        if (!parsePort(port, e.port))
            return Status::error("address '" + text + "': bad port '" + port + "'");
    if (!host.empty())
        e.host = host;
    return e;
}

std::string Endpoint::toString() const
{
    if (host.find(':') != std::string::npos)
        return "[" + host + "]:" + std::to_string(port);
    return host + ":" + std::to_string(port);
}

bool Endpoint::isLoopback() const
{
    if (host == "localhost" || host == "ip6-localhost")
        return true;
    in_addr v4 {};
    if (inet_pton(AF_INET, host.c_str(), &v4) == 1)
        return (ntohl(v4.s_addr) >> 24) == 127;
    in6_addr v6 {};
    if (inet_pton(AF_INET6, host.c_str(), &v6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&v6);
    return false;
}

} // namespace gapscope::capture
