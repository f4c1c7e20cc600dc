#include "net/control_url.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/url/parse.hpp>

#include "common/error_codes.hpp"

namespace takosumi::net {

std::string ControlUrl::authority() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + port;
}

Result<ControlUrl> parse_control_url(std::string_view text, std::string_view key) {
  const auto invalid = [&] {
    return fail(errc::kConfigInvalid, std::string(key) + " \"" + std::string(text) +
                                          "\" must look like https://host:port (or http:// for a "
                                          "loopback address), with no path, query or user");
  };
  auto url = boost::urls::parse_absolute_uri(text);
  if (!url || url->host().empty() || url->has_userinfo() || url->has_query() ||
      url->has_fragment() || !(url->path().empty() || url->path() == "/"))
    return invalid();
  ControlUrl out;
  if (url->scheme() == "https") out.tls = true;
  else if (url->scheme() != "http") return invalid();
  // A percent-encoded host could carry bytes (a NUL) every later use reads differently.
  if (url->encoded_host().find('%') != std::string_view::npos) return invalid();
  out.host = url->host_address();
  out.port = url->has_port() ? std::string(url->port()) : (out.tls ? "443" : "80");
  if (url->has_port() && (url->port().empty() || url->port_number() == 0 ||
                          url->port().size() > 5 || std::stoul(std::string(url->port())) > 65535))
    return invalid();
  return out;
}

bool is_loopback_host(std::string_view host) {
  if (host == "localhost") return true;
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(host, ec);
  return !ec && address.is_loopback();
}

Status check_plain_http(bool tls, std::string_view host, bool allowed, std::string_view key,
                        std::string_view key_allow) {
  if (tls || allowed || is_loopback_host(host)) return {};
  return fail(errc::kConfigInvalid,
              std::string(key) + ": plain http to " + std::string(host) +
                  " would send every token in clear; use https (docs/operations.md "
                  "\"Certificates\"), or set " + std::string(key_allow) +
                  ": true on a network you trust");
}

}  // namespace takosumi::net
