#include "controlplane/http/http_types.hpp"

#include <boost/json/serialize.hpp>
#include <boost/url/parse.hpp>

#include <charconv>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"

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

Result<std::int64_t> query_int(const HttpRequest& req, const std::string& key,
                               std::int64_t fallback, std::int64_t min, std::int64_t max) {
  auto it = req.query.find(key);
  if (it == req.query.end() || it->second.empty()) return fallback;
  std::int64_t v = 0;
  const auto& s = it->second;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < min || v > max)
    return fail(errc::kInvalidArgument, "query parameter " + key + " must be an integer between " +
                                            std::to_string(min) + " and " + std::to_string(max));
  return v;
}

int http_status_for(std::string_view code) {
  if (code == errc::kInvalidArgument || code == errc::kProtocolError ||
      code == errc::kEnvelopeMalformed || code == errc::kEnvelopeTruncated ||
      code == errc::kEnvelopeHeaderMismatch || code == errc::kEnvelopeWrongKey ||
      code == errc::kBackupInvalid || code == errc::kBackupSignatureInvalid ||
      code == errc::kBundleInvalid || code == errc::kBundleSignatureInvalid ||
      code == errc::kSourceDenied)
    return 400;
  if (code == errc::kUnauthorized || code == errc::kRegistrationChallengeInvalid ||
      code == errc::kRegistrationSignatureInvalid || code == errc::kAgentCredentialExpired)
    return 401;
  if (code == errc::kForbidden || code == errc::kAgentRevoked ||
      code == errc::kAgentCertificateMismatch)
    return 403;
  if (code == errc::kNotFound) return 404;
  if (code == errc::kMethodNotAllowed) return 405;
  if (code == errc::kConflict || code == errc::kLeaseLost ||
      code == errc::kDataLossNotAccepted || code == errc::kNoStateVersion ||
      code == errc::kConnectionRevoked || code == errc::kConnectionExpired ||
      code == errc::kAgentKeyMismatch || code == errc::kDependencyCycle)
    return 409;
  if (code == errc::kPayloadTooLarge) return 413;
  if (code == errc::kHeadersTooLarge) return 431;
  if (code == errc::kTooManyRequests) return 429;
  if (code == errc::kSourceFetchFailed) return 502;
  if (code == errc::kUnavailable || code == errc::kTempSpaceExhausted) return 503;
  return 500;
}

HttpResponse json_response(int status, const boost::json::value& body) {
  return HttpResponse{status, "application/json", boost::json::serialize(body), {}, {}};
}

HttpResponse error_response(const Error& error) {
  boost::json::object inner{{"code", error.code}, {"message", error.message}};
  return json_response(http_status_for(error.code), boost::json::object{{"error", std::move(inner)}});
}

}  // namespace takosumi::controlplane
