#pragma once
// Which addresses a source may never reach unless the operator says so: the host's own
// (loopback, "unspecified", which connects to it too), link-local ones (cloud metadata services
// live at 169.254.169.254), multicast, and the platform services clouds keep elsewhere
// (fd00:ec2::254, 100.100.100.200, 168.63.129.16), NAT64 forms included. A Workspace's gitUrl makes
// the control plane or the agent connect from where they stand: without this rule it reaches
// services that listen only for the machine itself. Private ranges (10/8, fc00::/7, …) are where
// organisations keep their Git servers, so they stay reachable; a firewall decides those.
#include <sys/socket.h>

#include <string_view>

namespace takosumi::protocol {

// How messages name them, in one place.
inline constexpr std::string_view kInternalAddressWords =
    "a loopback, link-local, multicast or cloud platform address";

// sockaddr_in or sockaddr_in6 (v4-mapped addresses as their v4 address); others are not internal.
bool is_internal_address(const sockaddr* address);

// A host as a URL names it: an IP literal (v6 in brackets or not) that is internal, or a
// "localhost" name ("localhost", "*.localhost", with or without the final dot), which resolvers
// answer with loopback without asking DNS.
bool names_internal_host(std::string_view host);

}  // namespace takosumi::protocol
