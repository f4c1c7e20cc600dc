#include "git/remote_request.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <array>

#include "common/error_codes.hpp"
#include "common/json_fields.hpp"

namespace takosumi::git {
namespace {

namespace json = boost::json;

constexpr std::array<std::pair<RemoteFailure, std::string_view>, 7> kFailures{{
    {RemoteFailure::auth, "auth"},
    {RemoteFailure::host_key, "host_key"},
    {RemoteFailure::unreachable, "unreachable"},
    {RemoteFailure::too_large, "too_large"},
    {RemoteFailure::local, "local"},
    {RemoteFailure::helper, "helper"},
    {RemoteFailure::denied, "denied"},
}};

std::optional<RemoteFailure> failure_from_string(std::string_view s) {
  for (const auto& [f, name] : kFailures)
    if (name == s) return f;
  return std::nullopt;
}

// Moves a JSON string into SecretBytes and zeroes the parser's copy.
SecretBytes take_secret(json::string& s) {
  SecretBytes out = SecretBytes::from_string(std::string_view(s.data(), s.size()));
  std::fill(s.data(), s.data() + s.size(), '\0');
  return out;
}

Result<protocol::GitCredential> parse_credential(json::object& o) {
  TAKOSUMI_TRY(check_known_fields(o, {"connectionId", "username", "token", "privateKey", "knownHosts"},
                                  "credential"));
  protocol::GitCredential c;
  auto id = get_string(o, "connectionId", 128);
  auto user = get_string(o, "username", 128);
  auto hosts = get_optional_string(o, "knownHosts", 256 * 1024);
  if (!id) return std::unexpected(id.error());
  if (!user) return std::unexpected(user.error());
  if (!hosts) return std::unexpected(hosts.error());
  c.connection_id = *id;
  c.username = *user;
  c.known_hosts = hosts->value_or("");
  for (auto [key, out] : {std::pair{"token", &c.token}, std::pair{"privateKey", &c.private_key}}) {
    json::value* v = o.if_contains(key);
    if (v == nullptr) continue;
    if (!v->is_string()) return fail(errc::kInvalidArgument, std::string("credential.") + key + " must be a string");
    *out = take_secret(v->get_string());
  }
  return c;
}

}  // namespace

std::string_view to_string(RemoteFailure failure) {
  for (const auto& [f, name] : kFailures)
    if (f == failure) return name;
  return "helper";
}

SecretBytes serialize_remote_request(const RemoteRequest& r) {
  json::object o{{"op", r.op == RemoteOp::fetch ? "fetch" : "list-refs"},
                 {"url", r.url},
                 {"repository", r.repository.string()},
                 {"caFile", r.ca_file.string()},
                 {"maxBytes", r.max_bytes},
                 {"allowInternalHosts", r.allow_internal_hosts}};
  if (r.credential) {
    json::object c{{"connectionId", r.credential->connection_id}, {"username", r.credential->username}};
    if (!r.credential->token.empty()) c["token"] = r.credential->token.reveal_as_string();
    if (!r.credential->private_key.empty()) c["privateKey"] = r.credential->private_key.reveal_as_string();
    if (!r.credential->known_hosts.empty()) c["knownHosts"] = r.credential->known_hosts;
    o["credential"] = std::move(c);
  }
  std::string text = json::serialize(o);
  SecretBytes out = SecretBytes::from_string(text);
  std::fill(text.begin(), text.end(), '\0');
  if (auto* c = o.if_contains("credential"))
    for (auto& kv : c->as_object())
      if (kv.value().is_string()) {
        auto& s = kv.value().get_string();
        std::fill(s.data(), s.data() + s.size(), '\0');
      }
  return out;
}

Result<RemoteRequest> parse_remote_request(std::string_view text) {
  auto parsed = parse_object(text, kMaxRemoteRequestBytes);
  if (!parsed) return std::unexpected(parsed.error());
  json::object& o = *parsed;
  TAKOSUMI_TRY(check_known_fields(
      o, {"op", "url", "repository", "caFile", "maxBytes", "allowInternalHosts", "credential"}));
  RemoteRequest r;
  auto op = get_string(o, "op", 16);
  auto url = get_string(o, "url", 4096);
  auto repo = get_string(o, "repository", 4096);
  auto ca = get_string(o, "caFile", 4096);
  auto max = get_int(o, "maxBytes");
  auto internal = get_bool_or(o, "allowInternalHosts", false);
  if (!internal) return std::unexpected(internal.error());
  r.allow_internal_hosts = *internal;
  if (!op) return std::unexpected(op.error());
  if (!url) return std::unexpected(url.error());
  if (!repo) return std::unexpected(repo.error());
  if (!ca) return std::unexpected(ca.error());
  if (!max) return std::unexpected(max.error());
  if (*op != "fetch" && *op != "list-refs") return fail(errc::kInvalidArgument, "unknown op " + *op);
  r.op = *op == "fetch" ? RemoteOp::fetch : RemoteOp::list_refs;
  r.url = *url;
  r.repository = *repo;
  r.ca_file = *ca;
  r.max_bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(*max, 0));
  if (json::value* c = o.if_contains("credential")) {
    if (!c->is_object()) return fail(errc::kInvalidArgument, "credential must be an object");
    auto credential = parse_credential(c->get_object());
    if (!credential) return std::unexpected(credential.error());
    r.credential = std::move(*credential);
  }
  return r;
}

std::string serialize_remote_result(const RemoteResult& r) {
  json::object o;
  if (r.failure) {
    o["error"] = json::object{{"kind", to_string(*r.failure)}, {"detail", r.detail}};
    return json::serialize(o);
  }
  json::object refs;
  for (const auto& [name, id] : r.refs) refs[name] = id;
  o["refs"] = std::move(refs);
  return json::serialize(o);
}

Result<RemoteResult> parse_remote_result(std::string_view text) {
  auto parsed = parse_object(text, kMaxRemoteResultBytes);
  if (!parsed) return std::unexpected(parsed.error());
  RemoteResult r;
  if (const json::value* e = parsed->if_contains("error")) {
    if (!e->is_object()) return fail(errc::kProtocolError, "the Git helper's error is not an object");
    auto kind = get_string(e->get_object(), "kind", 32);
    auto detail = get_string(e->get_object(), "detail", 64 * 1024);
    if (!kind || !detail) return fail(errc::kProtocolError, "the Git helper's error is malformed");
    auto failure = failure_from_string(*kind);
    if (!failure) return fail(errc::kProtocolError, "the Git helper named an unknown failure " + *kind);
    r.failure = *failure;
    r.detail = *detail;
    return r;
  }
  const json::value* refs = parsed->if_contains("refs");
  if (!refs || !refs->is_object()) return fail(errc::kProtocolError, "the Git helper's answer has no refs");
  for (const auto& kv : refs->get_object()) {
    if (!kv.value().is_string()) return fail(errc::kProtocolError, "the Git helper's refs are malformed");
    r.refs.emplace(std::string(kv.key()), std::string(kv.value().get_string()));
  }
  return r;
}

}  // namespace takosumi::git
