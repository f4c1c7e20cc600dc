#include "controlplane/http_types.hpp"

#include <boost/json/serialize.hpp>
#include <boost/url/parse.hpp>

#include "common/error_codes.hpp"

namespace takosumi::controlplane {

std::optional<std::string> HttpRequest::header(std::string_view lowercase_name) const {
  auto it = headers.find(std::string(lowercase_name));
  if (it == headers.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> HttpRequest::bearer_token() const {
  auto value = header("authorization");
  if (!value) return std::nullopt;
  constexpr std::string_view kScheme = "bearer ";
  if (value->size() <= kScheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < kScheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>((*value)[i])) != kScheme[i]) return std::nullopt;
  std::string token = value->substr(kScheme.size());
  while (!token.empty() && token.back() == ' ') token.pop_back();
  if (token.empty()) return std::nullopt;
  return token;
}

Status parse_target(HttpRequest& req) {
  auto url = boost::urls::parse_origin_form(req.target);
  if (!url) return fail(errc::kInvalidArgument, "malformed request target");
  req.path = std::string(url->path());
  for (const auto& param : url->params()) req.query[param.key] = param.value;
  return {};
}

int http_status_for(std::string_view code) {
  if (code == errc::kInvalidArgument || code == errc::kProtocolError ||
      code == errc::kEnvelopeMalformed || code == errc::kEnvelopeTruncated ||
      code == errc::kEnvelopeHeaderMismatch || code == errc::kEnvelopeWrongKey)
    return 400;
  if (code == errc::kUnauthorized) return 401;
  if (code == errc::kForbidden) return 403;
  if (code == errc::kNotFound) return 404;
  if (code == errc::kConflict || code == errc::kLeaseLost) return 409;
  if (code == errc::kPayloadTooLarge) return 413;
  if (code == errc::kSourceFetchFailed) return 502;
  if (code == errc::kUnavailable) return 503;
  return 500;
}

HttpResponse json_response(int status, const boost::json::value& body) {
  return HttpResponse{status, "application/json", boost::json::serialize(body), {}};
}

HttpResponse error_response(const Error& error) {
  boost::json::object inner{{"code", error.code}, {"message", error.message}};
  return json_response(http_status_for(error.code), boost::json::object{{"error", std::move(inner)}});
}

}  // namespace takosumi::controlplane
