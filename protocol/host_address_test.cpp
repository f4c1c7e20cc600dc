#include "protocol/host_address.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <string>

namespace takosumi::protocol {
namespace {

bool internal(const std::string& ip) {
  sockaddr_in v4{};
  v4.sin_family = AF_INET;
  if (::inet_pton(AF_INET, ip.c_str(), &v4.sin_addr) == 1)
    return is_internal_address(reinterpret_cast<const sockaddr*>(&v4));
  sockaddr_in6 v6{};
  v6.sin6_family = AF_INET6;
  EXPECT_EQ(::inet_pton(AF_INET6, ip.c_str(), &v6.sin6_addr), 1) << ip;
  return is_internal_address(reinterpret_cast<const sockaddr*>(&v6));
}

TEST(HostAddress, LoopbackLinkLocalUnspecifiedAndMulticastAreInternal) {
  for (const char* ip : {"127.0.0.1", "127.255.0.9", "0.0.0.0", "0.1.2.3", "169.254.169.254",
                         "224.0.0.251", "255.255.255.255", "::1", "::", "fe80::1", "ff02::1",
                         "::ffff:127.0.0.1", "::ffff:169.254.169.254", "fd00:ec2::254",
                         "100.100.100.200", "168.63.129.16", "64:ff9b::a9fe:a9fe", "64:ff9b::7f00:1"})
    EXPECT_TRUE(internal(ip)) << ip;
  for (const char* ip : {"10.0.0.1", "172.16.0.1", "192.168.0.1", "8.8.8.8", "128.0.0.1",
                         "169.255.0.1", "fd00:ec2::253", "fc00::1", "2001:db8::1", "::ffff:10.0.0.1",
                         "100.64.0.1", "100.100.100.201", "168.63.129.17", "64:ff9b::808:808"})
    EXPECT_FALSE(internal(ip)) << ip;
}

TEST(HostAddress, UrlHostsNameTheMachineInEverySpellingAResolverTakes) {
  for (const char* host : {"localhost", "LocalHost.", "a.b.localhost", "127.0.0.1", "127.1",
                           "0x7f.1", "2130706433", "[::1]", "::1", "[fe80::1]", "169.254.169.254"})
    EXPECT_TRUE(names_internal_host(host)) << host;
  for (const char* host : {"example.com", "localhost.example.com", "mylocalhost", "10.1.2.3", "[2001:db8::1]"})
    EXPECT_FALSE(names_internal_host(host)) << host;
}

}  // namespace
}  // namespace takosumi::protocol
