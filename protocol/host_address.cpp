#include "protocol/host_address.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

#include "common/ascii.hpp"

namespace takosumi::protocol {
namespace {

bool internal_v4(const in_addr& a) {
  const std::uint32_t ip = ntohl(a.s_addr);
  const auto in = [ip](std::uint32_t net, int bits) { return (ip >> (32 - bits)) == (net >> (32 - bits)); };
  return in(0x00000000, 8)       // 0/8: "this host"
         || in(0x7f000000, 8)    // 127/8: loopback
         || in(0xa9fe0000, 16)   // 169.254/16: link-local, metadata services
         || in(0xe0000000, 4)    // 224/4: multicast
         || ip == 0xffffffffu    // broadcast
         // Cloud platform services outside link-local: Alibaba Cloud's metadata service (in
         // 100.64/10, which stays reachable: carrier-grade NAT and overlay networks use it) and
         // Azure's platform endpoint (wireserver).
         || ip == 0x646464c8u    // 100.100.100.200
         || ip == 0xa83f8110u;   // 168.63.129.16
}

bool internal_v6(const in6_addr& a) {
  const unsigned char* b = a.s6_addr;
  if (IN6_IS_ADDR_V4MAPPED(&a) || IN6_IS_ADDR_V4COMPAT(&a)) {
    in_addr v4{};
    std::memcpy(&v4.s_addr, b + 12, 4);
    // ::/128 and ::1 are V4COMPAT-shaped too; both are internal either way.
    return internal_v4(v4) || IN6_IS_ADDR_UNSPECIFIED(&a) || IN6_IS_ADDR_LOOPBACK(&a);
  }
  // NAT64 (64:ff9b::/96) reaches the IPv4 address in its last 32 bits.
  static const unsigned char kNat64[12] = {0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  if (std::memcmp(b, kNat64, 12) == 0) {
    in_addr v4{};
    std::memcpy(&v4.s_addr, b + 12, 4);
    return internal_v4(v4);
  }
  static const unsigned char kAwsMetadata[16] = {0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0,
                                                 0,    0,    0,    0,    0, 0, 0x02, 0x54};
  return IN6_IS_ADDR_LOOPBACK(&a) || IN6_IS_ADDR_UNSPECIFIED(&a) || IN6_IS_ADDR_LINKLOCAL(&a) ||
         IN6_IS_ADDR_MULTICAST(&a) || std::memcmp(b, kAwsMetadata, 16) == 0;
}

}  // namespace

bool is_internal_address(const sockaddr* address) {
  if (address == nullptr) return false;
  if (address->sa_family == AF_INET) return internal_v4(reinterpret_cast<const sockaddr_in*>(address)->sin_addr);
  if (address->sa_family == AF_INET6)
    return internal_v6(reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr);
  return false;
}

bool names_internal_host(std::string_view host) {
  if (host.starts_with('[') && host.ends_with(']')) host = host.substr(1, host.size() - 2);
  std::string name = ascii_lower(host);
  if (name.ends_with('.')) name.pop_back();
  if (name == "localhost" || name.ends_with(".localhost")) return true;
  // inet_aton, as resolvers do: "127.1", "0x7f000001" and "2130706433" are loopback too.
  in_addr v4{};
  if (::inet_aton(name.c_str(), &v4) != 0) return internal_v4(v4);
  in6_addr v6{};
  if (::inet_pton(AF_INET6, name.c_str(), &v6) == 1) return internal_v6(v6);
  return false;
}

}  // namespace takosumi::protocol
