#include "tests/support/http_client.hpp"

#include <stdexcept>

#include "net/beast_transport.hpp"
#include "net/blocking_request.hpp"

namespace takosumi::testing {

namespace {

std::unique_ptr<net::BeastTransport> make_transport(const std::string& url,
                                                    const net::TlsClientFiles& tls) {
  net::BeastTransport::Options options;
  options.tls = tls;
  options.user_agent = "takosumi-tests";
  auto transport = net::BeastTransport::make(url, options);
  if (!transport) throw std::runtime_error("test client: " + transport.error().to_string());
  return std::make_unique<net::BeastTransport>(std::move(*transport));
}

}  // namespace

HttpClient::HttpClient(unsigned short port, std::string bearer)
    : url_("http://127.0.0.1:" + std::to_string(port)), bearer_(std::move(bearer)),
      transport_(make_transport(url_, tls_)) {}

HttpClient::HttpClient(std::string host, unsigned short port, std::string bearer,
                       net::TlsClientFiles tls)
    : url_("https://" + host + ":" + std::to_string(port)), bearer_(std::move(bearer)),
      tls_(std::move(tls)), transport_(make_transport(url_, tls_)) {}

HttpClient::~HttpClient() = default;
HttpClient::HttpClient(HttpClient&&) noexcept = default;

HttpClient::HttpClient(std::string url, std::string bearer, net::TlsClientFiles tls, Copy)
    : url_(std::move(url)), bearer_(std::move(bearer)), tls_(std::move(tls)),
      transport_(make_transport(url_, tls_)) {}

HttpClient HttpClient::with_token(std::string bearer) const {
  return HttpClient(url_, std::move(bearer), tls_, Copy{});
}

JsonResponse HttpClient::request(const std::string& method, const std::string& target,
                                 const std::string& body, const Headers& headers) const {
  net::HttpRequest req;
  req.method = method;
  req.target = target;
  req.body = body;
  if (!bearer_.empty()) req.headers["Authorization"] = "Bearer " + bearer_;
  for (const auto& [name, value] : headers) req.headers[name] = value;
  req.response_limit = 64 << 20;
  req.timeout = std::chrono::seconds(60);
  auto response = net::request_blocking(*transport_, std::move(req));
  JsonResponse out;
  if (!response) {
    out.error_code = response.error().code;
    out.body = response.error().message;
    out.json = nullptr;
    return out;
  }
  out.status = response->status;
  out.body = std::move(response->body);
  boost::system::error_code ec;
  out.json = boost::json::parse(out.body, ec);
  if (ec) out.json = nullptr;
  return out;
}

}  // namespace takosumi::testing
