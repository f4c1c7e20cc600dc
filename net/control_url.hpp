#pragma once
// The address of a takosumi-control as its clients write it: http(s)://host[:port], nothing
// after. Plain http carries the pool token and every credential in clear, so it is allowed only
// to a loopback address unless the operator says otherwise (allowInsecureHttp), for the agent's
// URL and the control plane's listener alike.
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace takosumi::net {

struct ControlUrl {
  bool tls = false;
  std::string host;  // without IPv6 brackets: what the resolver and certificate checks take
  std::string port;  // "443" / "80" when the URL names none
  // The Host header: the host as written in the URL plus the port.
  std::string authority() const;
};

// key names the setting in errors (config_invalid), e.g. "controlPlane.url".
Result<ControlUrl> parse_control_url(std::string_view text, std::string_view key);

// "localhost", 127.0.0.0/8 and ::1. Other names are not looked up: a name is judged as written.
bool is_loopback_host(std::string_view host);

// config_invalid for plain http to a host that is not loopback, unless allowed (the caller warns
// at every start when it is); key_allow names the setting that allows it.
Status check_plain_http(bool tls, std::string_view host, bool allowed, std::string_view key,
                        std::string_view key_allow);

}  // namespace takosumi::net
