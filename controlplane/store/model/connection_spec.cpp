#include "controlplane/store/model/connection_spec.hpp"

#include <algorithm>
#include <set>

#include "common/clock.hpp"
#include "common/error_codes.hpp"
#include "common/strict_json.hpp"
#include "controlplane/store/model/capsule_spec.hpp"
#include "protocol/credential_names.hpp"
#include "protocol/git_credential.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::controlplane {
namespace {

namespace json = boost::json;
using NameCheck = Status (*)(std::string_view field, std::string_view name);

std::unexpected<Error> invalid(std::string message) {
  return fail(errc::kInvalidArgument, std::move(message));
}

Status credential_name(std::string_view field, std::string_view name) {
  if (auto ok = protocol::validate_credential_name(name); !ok)
    return std::unexpected(ok.error().with_context(field));
  return {};
}

// A Connection of kind git holds only its own names; validate_git_values checks the combination.
Status git_value_name(std::string_view field, std::string_view name) {
  for (auto known : {protocol::kGitToken, protocol::kGitUsername, protocol::kGitSshPrivateKey,
                     protocol::kGitSshKnownHosts})
    if (name == known) return {};
  return invalid(std::string(field) + ": a Connection of kind git takes TOKEN, USERNAME, "
                 "SSH_PRIVATE_KEY and SSH_KNOWN_HOSTS only, not \"" + std::string(name.substr(0, 128)) + "\"");
}

Status variable_name(std::string_view field, std::string_view name) {
  if (protocol::is_valid_variable_name(name)) return {};
  return invalid(std::string(field) + ": name \"" + std::string(name.substr(0, 128)) +
                 "\" must match ^[A-Za-z_][A-Za-z0-9_-]*$ (at most 128 characters)");
}

void wipe_strings(json::object& o) {
  for (auto& kv : o)
    if (kv.value().is_string()) {
      auto& s = kv.value().get_string();
      std::fill(s.data(), s.data() + s.size(), '\0');
    }
}

struct MapRule {
  std::string_view field;
  std::size_t min_entries;
  std::size_t max_entries;
  NameCheck check_name;
};

Result<SecretMap> read_secret_map(const json::object& o, const MapRule& rule) {
  const std::string field(rule.field);
  if (o.size() < rule.min_entries || o.size() > rule.max_entries)
    return invalid(field + " must have " + std::to_string(rule.min_entries) + " to " +
                   std::to_string(rule.max_entries) + " entries");
  SecretMap out;
  for (const auto& kv : o) {
    const std::string_view name(kv.key().data(), kv.key().size());
    TAKOSUMI_TRY(rule.check_name(field, name));
    if (!kv.value().is_string() || kv.value().get_string().size() > protocol::kMaxSecretValueBytes)
      return invalid(field + "." + std::string(name) + " must be a string of at most 64 KiB");
    const auto& value = kv.value().get_string();
    out.emplace(std::string(name), SecretBytes::from_string(std::string_view(value.data(), value.size())));
  }
  return out;
}

// Reads body[rule.field] and zeroes the strings it held, also when it is refused.
Result<std::optional<SecretMap>> take_secret_map(json::object& body, const MapRule& rule) {
  auto it = body.find(rule.field);
  if (it == body.end() || it->value().is_null()) return std::optional<SecretMap>{};
  if (!it->value().is_object())
    return invalid("field \"" + std::string(rule.field) + "\" must be an object");
  json::object& o = it->value().get_object();
  auto taken = read_secret_map(o, rule);
  wipe_strings(o);
  if (!taken) return std::unexpected(taken.error());
  return std::optional<SecretMap>(std::move(*taken));
}

Result<protocol::AuthMode> parse_auth_mode(const json::object& body) {
  auto text = get_string(body, "authMode", 16);
  if (!text) return std::unexpected(text.error());
  auto mode = protocol::auth_mode_from_string(*text);
  if (!mode) return invalid("authMode must be \"env\" or \"files\"");
  return *mode;
}

Result<std::string> parse_kind(const json::object& body) {
  auto kind = get_optional_string(body, "kind", 16);
  if (!kind) return std::unexpected(kind.error());
  const std::string value = kind->value_or(std::string(connection_kind::kProvider));
  if (value != connection_kind::kProvider && value != connection_kind::kGit)
    return invalid("kind must be \"provider\" (credentials for a provider) or \"git\" (what a "
                   "Capsule's source is fetched with)");
  return value;
}

Status parse_identity(const json::object& body, ConnectionRequest& req) {
  auto workspace = get_string(body, "workspaceId", 128);
  if (!workspace) return std::unexpected(workspace.error());
  auto name = get_string(body, "name", 256);
  if (!name) return std::unexpected(name.error());
  if (!is_valid_name(*name))
    return invalid("name \"" + *name + "\" must match ^[a-z0-9][a-z0-9_-]{0,62}$");
  req.workspace_id = std::move(*workspace);
  req.name = std::move(*name);
  if (req.kind == connection_kind::kGit) {
    if (body.contains("provider") || body.contains("authMode"))
      return invalid("a Connection of kind git takes neither provider nor authMode: its values are "
                     "for fetching the source only, never given to tofu");
    return {};
  }
  auto provider = get_string(body, "provider", 512);
  if (!provider) return std::unexpected(provider.error());
  if (!protocol::is_qualified_provider_address(*provider))
    return invalid("provider \"" + provider->substr(0, 256) +
                   "\" must be a fully qualified provider source address (hostname/namespace/type"
                   " in lower case), e.g. registry.opentofu.org/hashicorp/aws");
  auto mode = parse_auth_mode(body);
  if (!mode) return std::unexpected(mode.error());
  req.provider = std::move(*provider);
  req.auth_mode = *mode;
  return {};
}

}  // namespace

Result<ConnectionRequest> take_connection_request(json::object& body, std::int64_t now) {
  // Values first, so they are taken out of (and zeroed in) the body even when another field is bad.
  auto kind = parse_kind(body);
  const bool git = kind && *kind == connection_kind::kGit;
  auto values = take_secret_map(
      body, {"values", 1, protocol::kMaxValuesPerConnection, git ? &git_value_name : &credential_name});
  if (!kind) return std::unexpected(kind.error());
  if (!values) return std::unexpected(values.error());
  if (!*values) return invalid("field \"values\" is required");
  TAKOSUMI_TRY(check_known_fields(
      body, {"workspaceId", "name", "kind", "provider", "authMode", "values", "expiresAt"}));
  ConnectionRequest req;
  req.kind = *kind;
  req.values = std::move(**values);
  if (git) TAKOSUMI_TRY(protocol::validate_git_values(req.values));
  TAKOSUMI_TRY(parse_identity(body, req));
  auto expires = get_optional_time(body, "expiresAt");
  if (!expires) return std::unexpected(expires.error());
  if (*expires && **expires <= now)
    return invalid("expiresAt " + utc_timestamp(**expires) + " is not in the future (now is " +
                   utc_timestamp(now) + ")");
  req.expires_at = *expires;
  return req;
}

Result<std::optional<SecretMap>> take_sensitive_variables(json::object& body) {
  return take_secret_map(
      body, {"sensitiveVariables", 0, protocol::kMaxSensitiveVariables, &variable_name});
}

Status check_no_plain_twin(const SecretMap& sensitive,
                           const protocol::Variables& variables) {
  for (const auto& [name, value] : sensitive)
    if (variables.contains(name))
      return invalid("sensitiveVariables." + name + " is also a plain variable; a variable is"
                     " either plain (variables) or sensitive (sensitiveVariables), not both");
  return {};
}

Result<std::optional<std::vector<std::string>>> parse_connection_ids(const json::object& body) {
  auto list = get_optional_array(body, "connections");
  if (!list) return std::unexpected(list.error());
  if (!*list) return std::optional<std::vector<std::string>>{};
  if ((*list)->size() > protocol::kMaxConnectionsPerRun)
    return invalid("connections: a Capsule may use at most " +
                   std::to_string(protocol::kMaxConnectionsPerRun) + " Connections");
  std::vector<std::string> ids;
  for (const auto& v : **list) {
    if (!v.is_string() || v.get_string().empty() || v.get_string().size() > 128)
      return invalid("connections must hold Connection ids (strings)");
    std::string id(v.get_string());
    if (std::ranges::find(ids, id) != ids.end())
      return invalid("connections: " + id + " is listed twice");
    ids.push_back(std::move(id));
  }
  return std::optional<std::vector<std::string>>(std::move(ids));
}

std::optional<Error> connection_unusable(const Connection& c, std::int64_t now) {
  const std::string who = "connection \"" + c.name + "\" (" + c.id + ")";
  const auto status = c.status(now);
  if (status == connection_status::kRevoked)
    return Error{std::string(errc::kConnectionRevoked),
                 who + " was revoked at " + std::to_string(c.revoked_at.value_or(0))};
  if (status == connection_status::kExpired)
    return Error{std::string(errc::kConnectionExpired),
                 who + " expired at " + utc_timestamp(c.expires_at.value_or(0))};
  return std::nullopt;
}

std::string foreign_connection_message(std::string_view connection_id,
                                       std::string_view workspace_id) {
  return "connection " + std::string(connection_id) +
         " is not a Connection of the capsule's workspace " + std::string(workspace_id);
}

Status check_assignment(std::string_view workspace_id, const std::vector<Connection>& connections,
                        std::int64_t now) {
  if (connections.size() > protocol::kMaxConnectionsPerRun)
    return invalid("a Capsule may use at most " + std::to_string(protocol::kMaxConnectionsPerRun) +
                   " Connections");
  std::map<std::string, const Connection*> owner;  // credential name → the Connection defining it
  for (const auto& c : connections) {
    if (c.workspace_id != workspace_id)
      // Names neither the other Workspace nor the Connection's name: the caller may hold no
      // role there.
      return invalid(foreign_connection_message(c.id, workspace_id));
    if (c.kind == connection_kind::kGit)
      return invalid("connection \"" + c.name + "\" (" + c.id + ") is of kind git: it is what a "
                     "source is fetched with, never given to tofu; name it as source.connection");
    if (auto why = connection_unusable(c, now))
      return std::unexpected(Error{why->code, why->message + "; only active Connections can be assigned"});
    for (const auto& name : c.credential_names) {
      auto [it, fresh] = owner.emplace(name, &c);
      if (!fresh)
        return invalid("connections \"" + it->second->name + "\" (" + it->second->id + ") and \"" +
                       c.name + "\" (" + c.id + ") both define the credential " + name +
                       "; a Run takes each credential name from one Connection only");
    }
  }
  return {};
}

}  // namespace takosumi::controlplane
