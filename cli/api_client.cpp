#include "cli/api_client.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "common/error_codes.hpp"
#include "common/version.hpp"
#include "net/beast_transport.hpp"
#include "net/blocking_request.hpp"

namespace takosumi::cli {

Exit ApiError::exit() const {
  if (status >= 400 && status < 500) return Exit::refused;
  if (status == 0 && error.code == errc::kConfigInvalid) return Exit::failure;  // ours to fix
  return Exit::unreachable;
}

Result<ApiClient> ApiClient::make(Settings settings) {
  net::BeastTransport::Options options;
  options.tls = settings.tls;
  options.url_key = "the control plane URL";
  options.allow_key = "--allow-insecure-http";
  options.allow_insecure_http = settings.allow_insecure_http;
  options.user_agent = "takosumi/" TAKOSUMI_VERSION;
  auto transport = net::BeastTransport::make(settings.url, options);
  if (!transport) return std::unexpected(transport.error());
  return ApiClient(std::move(settings),
                   std::make_unique<net::BeastTransport>(std::move(*transport)));
}

ApiClient::ApiClient(Settings settings, std::unique_ptr<net::BeastTransport> transport)
    : settings_(std::move(settings)), transport_(std::move(transport)) {}
ApiClient::~ApiClient() = default;
ApiClient::ApiClient(ApiClient&&) noexcept = default;

std::expected<boost::json::value, ApiError> ApiClient::get(const std::string& target) const {
  return call("GET", target, "");
}

std::expected<boost::json::value, ApiError> ApiClient::post(const std::string& target,
                                                            const boost::json::value& body) const {
  return call("POST", target, boost::json::serialize(body));
}

std::expected<boost::json::value, ApiError> ApiClient::put(const std::string& target,
                                                           const boost::json::value& body) const {
  return call("PUT", target, boost::json::serialize(body));
}

std::expected<boost::json::value, ApiError> ApiClient::patch(const std::string& target,
                                                             const boost::json::value& body) const {
  return call("PATCH", target, boost::json::serialize(body));
}

std::expected<boost::json::value, ApiError> ApiClient::call(const std::string& method,
                                                            const std::string& target,
                                                            const std::string& body) const {
  net::HttpRequest req;
  req.method = method;
  req.target = target;
  req.body = body;
  req.response_limit = 64 << 20;
  return exchange(std::move(req));
}

std::expected<void, ApiError> ApiClient::post_for_file(const std::string& target,
                                                       const boost::json::value& body,
                                                       const std::filesystem::path& to) const {
  net::HttpRequest req;
  req.method = "POST";
  req.target = target;
  req.body = boost::json::serialize(body);
  req.response_file = to;
  // A bundle holds a state, a plan and a source: as much as an artifact upload may, three times.
  req.response_limit = std::size_t{3} * (256u << 20) + (64u << 20);
  req.timeout = std::chrono::seconds(600);
  auto answer = exchange(std::move(req));
  if (!answer) return std::unexpected(answer.error());
  return {};
}

std::expected<boost::json::value, ApiError> ApiClient::post_file(const std::string& target,
                                                                 const std::filesystem::path& from) const {
  net::HttpRequest req;
  req.method = "POST";
  req.target = target;
  req.body_file = from;
  req.headers["Content-Type"] = "application/octet-stream";
  req.response_limit = 1 << 20;
  req.timeout = std::chrono::seconds(600);
  return exchange(std::move(req));
}

std::expected<boost::json::value, ApiError> ApiClient::exchange(net::HttpRequest req) const {
  const std::string method = req.method;
  const std::string target = req.target;
  req.headers["Authorization"] = "Bearer " + std::string(settings_.token.reveal_as_string());
  if (req.timeout == net::HttpRequest{}.timeout) req.timeout = std::chrono::seconds(60);
  auto response = net::request_blocking(*transport_, std::move(req));
  if (!response) return std::unexpected(ApiError{response.error(), 0});
  boost::system::error_code ec;
  auto parsed = boost::json::parse(response->body, ec);
  if (response->status / 100 == 2) {
    if (response->body.empty()) return boost::json::value(nullptr);
    if (ec)
      return std::unexpected(ApiError{{std::string(errc::kProtocolError),
                                       method + " " + target + ": the answer is not JSON"},
                                      response->status});
    return parsed;
  }
  Error error{std::string(errc::kProtocolError),
              method + " " + target + ": HTTP " + std::to_string(response->status)};
  if (!ec && parsed.is_object() && parsed.as_object().contains("error")) {
    const auto& e = parsed.as_object().at("error");
    if (e.is_object() && e.as_object().contains("code") && e.as_object().at("code").is_string())
      error.code = std::string(e.as_object().at("code").as_string());
    if (e.is_object() && e.as_object().contains("message") &&
        e.as_object().at("message").is_string())
      error.message = std::string(e.as_object().at("message").as_string());
  }
  return std::unexpected(ApiError{std::move(error), response->status});
}

}  // namespace takosumi::cli
