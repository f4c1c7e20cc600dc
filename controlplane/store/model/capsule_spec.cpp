#include "controlplane/store/model/capsule_spec.hpp"

#include <algorithm>
#include <array>

#include "common/error_codes.hpp"
#include "common/strict_json.hpp"
#include "controlplane/store/agent_pool_store.hpp"
#include "protocol/output_type.hpp"
#include "protocol/source_url.hpp"
#include "protocol/version_constraint.hpp"

namespace takosumi::controlplane {
namespace {

constexpr std::size_t kMaxEntries = 256;

bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool is_alpha_(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }


bool has_space_or_control(std::string_view s) {
  return std::ranges::any_of(s, [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u <= 0x20 || u == 0x7f;
  });
}

std::unexpected<Error> invalid(std::string message) {
  return fail(errc::kInvalidArgument, std::move(message));
}

Result<CapsuleSource> parse_source(const json::object& body) {
  auto source = get_object(body, "source");
  if (!source) return std::unexpected(source.error());
  const json::object& s = **source;
  TAKOSUMI_TRY(check_known_fields(s, {"gitUrl", "ref", "modulePath", "connection"}, "source"));
  auto url = get_string(s, "gitUrl", 2048);
  if (!url) return std::unexpected(url.error().with_context("source"));
  // The form only: whether a file:// path lies under the operator's roots is the API's check
  // (it knows the configuration).
  if (auto parsed = protocol::parse_source_url(*url); !parsed) return std::unexpected(parsed.error());
  auto connection = get_optional_string(s, "connection", 128);
  if (!connection) return std::unexpected(connection.error().with_context("source"));
  if (*connection && !is_plausible_id(**connection))
    return invalid("source.connection must be the id of a Connection of kind git");
  auto ref = get_optional_string(s, "ref", 256);
  if (!ref) return std::unexpected(ref.error().with_context("source"));
  std::string ref_value = ref->value_or("HEAD");
  if (ref_value.empty() || ref_value.front() == '-' || has_space_or_control(ref_value))
    return invalid("source.ref must be a branch, tag, HEAD or a 40-hex commit");
  auto module = get_optional_string(s, "modulePath", 1024);
  if (!module) return std::unexpected(module.error().with_context("source"));
  std::string module_path = module->value_or("");
  if (auto st = validate_module_path(module_path); !st)
    return std::unexpected(st.error().with_context("source.modulePath"));
  return CapsuleSource{*url, ref_value, module_path, *connection};
}

// run_policy_from_json names a field in its own words ("network must …", "field \"network\" must
// …", "allowedProviders: …"); the API names it from the request's root: "policy.network must …".
Error policy_field_error(const Error& e, std::string_view key) {
  std::string_view rest = e.message;
  const std::string quoted = "field \"" + std::string(key) + "\"";
  if (rest.starts_with(quoted))
    rest.remove_prefix(quoted.size());
  else if (rest.starts_with(key))
    rest.remove_prefix(key.size());
  else
    return e.with_context("policy." + std::string(key));
  return Error{e.code, "policy." + std::string(key) + std::string(rest)};
}

Result<std::string> parse_name(const json::object& body) {
  auto name = get_string(body, "name", 256);
  if (!name) return name;
  if (!is_valid_name(*name))
    return invalid("name \"" + *name + "\" must match ^[a-z0-9][a-z0-9_-]{0,62}$");
  return name;
}

}  // namespace

bool is_plausible_id(std::string_view id) {
  return !id.empty() && id.size() <= 128 && std::ranges::all_of(id, [](char c) {
    return is_lower_alnum(c) || c == '_';
  });
}

bool is_valid_name(std::string_view name) {
  if (name.empty() || name.size() > 63 || !is_lower_alnum(name.front())) return false;
  return std::ranges::all_of(name, [](char c) { return is_lower_alnum(c) || c == '_' || c == '-'; });
}

bool is_valid_output_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || !is_alpha_(name.front())) return false;
  return std::ranges::all_of(name, [](char c) { return is_alpha_(c) || is_digit(c); });
}

Status validate_module_path(std::string_view path) {
  if (path.empty() || path == ".") return {};
  if (path.front() == '/') return invalid("must be relative to the repository root");
  if (path.find('\\') != std::string_view::npos || has_space_or_control(path))
    return invalid("must not contain backslashes, spaces or control characters");
  std::size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (path.substr(start, end - start) == "..") return invalid("must not contain \"..\"");
    start = end + 1;
  }
  return {};
}

Result<std::string> parse_workspace_request(const json::object& body) {
  TAKOSUMI_TRY(check_known_fields(body, {"name"}));
  return parse_name(body);
}

Result<OutputAllowlist> allowlist_from_json(const json::object& o) {
  OutputAllowlist out;
  if (o.size() > kMaxEntries) return invalid("outputAllowlist has more than 256 entries");
  for (const auto& kv : o) {
    const std::string name(kv.key());
    const std::string field = "outputAllowlist." + name;
    if (!is_valid_output_name(name))
      return invalid("outputAllowlist: public name \"" + name +
                     "\" must match ^[A-Za-z_][A-Za-z0-9_]*$");
    if (!kv.value().is_object()) return invalid(field + " must be an object");
    const auto& e = kv.value().get_object();
    TAKOSUMI_TRY(check_known_fields(e, {"from", "type", "required"}, field));
    auto from = get_string(e, "from", 128);
    if (!from) return std::unexpected(from.error().with_context(field));
    if (!protocol::is_tofu_identifier(*from))
      return invalid(field + ".from \"" + *from + "\" is not an OpenTofu output name");
    auto type = get_optional_string(e, "type", 32);
    if (!type) return std::unexpected(type.error().with_context(field));
    std::string t = type->value_or("any");
    if (!protocol::is_output_type(t))
      return invalid(field + ".type \"" + t + "\" must be one of string, number, bool, any");
    auto required = get_bool_or(e, "required", false);
    if (!required) return std::unexpected(required.error().with_context(field));
    out.emplace(name, protocol::OutputMapping{*from, t, *required});
  }
  return out;
}

Result<protocol::RunPolicy> parse_policy(const json::object& o) {
  TAKOSUMI_TRY(check_known_fields(
      o, {"allowedProviders", "deniedProviders", "allowProvisioners", "allowExternalData", "network"},
      "policy"));
  // Field by field first, so that an error knows which field it is about.
  for (const auto& kv : o) {
    const std::string key(kv.key());
    auto alone = protocol::run_policy_from_json(json::object{{key, kv.value()}});
    if (!alone) return std::unexpected(policy_field_error(alone.error(), key));
  }
  return protocol::run_policy_from_json(o);
}

Result<CapsuleRequest> parse_capsule_request(const json::object& body) {
  // connections and sensitiveVariables are read by connection_spec.hpp (PublicApi::capsule_secrets).
  TAKOSUMI_TRY(check_known_fields(body, {"name", "source", "outputAllowlist", "variables",
                                         "policy", "connections", "sensitiveVariables",
                                         "agentPool", "agentLabels", "opentofuVersion"}));
  CapsuleRequest req;
  auto name = parse_name(body);
  if (!name) return std::unexpected(name.error());
  req.name = std::move(*name);
  auto source = parse_source(body);
  if (!source) return std::unexpected(source.error());
  req.source = std::move(*source);
  TAKOSUMI_TRY(
      read_optional_object(body, "outputAllowlist", allowlist_from_json, req.output_allowlist));
  TAKOSUMI_TRY(
      read_optional_object(body, "variables", protocol::variables_from_json, req.variables));
  TAKOSUMI_TRY(read_optional_object(body, "policy", parse_policy, req.policy));
  auto agents = parse_agent_requirements(body);
  if (!agents) return std::unexpected(agents.error());
  req.agents = std::move(*agents);
  auto opentofu = parse_opentofu_version(body);
  if (!opentofu) return std::unexpected(opentofu.error());
  req.opentofu_version = std::move(*opentofu);
  return req;
}

Capsule with_change(const Capsule& from, const CapsuleChange& change) {
  Capsule next = from;
  if (change.name) next.name = *change.name;
  if (change.source) {
    next.source = *change.source;
    if (!change.source_connection_given) next.source.connection_id = from.source.connection_id;
  }
  if (change.output_allowlist) next.output_allowlist = *change.output_allowlist;
  if (change.variables) next.variables = *change.variables;
  return next;
}

Result<CapsuleChange> parse_capsule_change(const json::object& body, const Capsule& current) {
  // What is changed elsewhere is named, so a client is not left guessing why it was refused.
  static constexpr std::pair<std::string_view, std::string_view> kElsewhere[] = {
      {"policy", "PUT /api/v1/capsules/{id}/policy"},
      {"connections", "PUT /api/v1/capsules/{id}/connections"},
      {"sensitiveVariables", "PUT /api/v1/capsules/{id}/sensitive-variables"},
      {"agentPool", "PUT /api/v1/capsules/{id}/agent-requirements"},
      {"agentLabels", "PUT /api/v1/capsules/{id}/agent-requirements"},
      {"opentofuVersion", "PUT /api/v1/capsules/{id}/opentofu-version"}};
  for (const auto& [field, where] : kElsewhere)
    if (body.contains(field))
      return invalid("field \"" + std::string(field) + "\" is not changed here: use " + std::string(where));
  TAKOSUMI_TRY(check_known_fields(body, {"name", "source", "outputAllowlist", "variables"}));
  if (body.empty())
    return invalid("nothing to change: give one or more of name, source, outputAllowlist, variables");
  CapsuleChange change;
  if (body.contains("name")) {
    auto name = parse_name(body);
    if (!name) return std::unexpected(name.error());
    change.name = std::move(*name);
  }
  if (const auto* given = body.if_contains("source")) {
    if (!given->is_object()) return invalid("field \"source\" must be an object");
    change.source_connection_given = given->get_object().contains("connection");
    // Fields left out keep their current values; the result is checked as a whole, as at creation.
    json::object source{{"gitUrl", current.source.git_url},
                        {"ref", current.source.ref},
                        {"modulePath", current.source.module_path}};
    if (current.source.connection_id) source["connection"] = *current.source.connection_id;
    for (const auto& [key, value] : given->get_object()) source[key] = value;
    if (const auto* connection = source.if_contains("connection"); connection && connection->is_null())
      source.erase("connection");
    auto parsed = parse_source(json::object{{"source", std::move(source)}});
    if (!parsed) return std::unexpected(parsed.error());
    change.source = std::move(*parsed);
  }
  if (body.contains("outputAllowlist")) {
    OutputAllowlist allowlist;
    TAKOSUMI_TRY(read_optional_object(body, "outputAllowlist", allowlist_from_json, allowlist));
    change.output_allowlist = std::move(allowlist);
  }
  if (body.contains("variables")) {
    protocol::Variables variables;
    TAKOSUMI_TRY(read_optional_object(body, "variables", protocol::variables_from_json, variables));
    change.variables = std::move(variables);
  }
  return change;
}

Result<AgentRequirements> parse_agent_requirements(const json::object& body) {
  AgentRequirements out;
  if (const auto* pool = body.if_contains("agentPool"); pool && !pool->is_null()) {
    if (!pool->is_string() || !is_valid_name(pool->get_string()))
      return invalid("agentPool must be an agent pool's name (^[a-z0-9][a-z0-9_-]{0,62}$)");
    out.pool = std::string(pool->get_string());
  }
  if (const auto* labels = body.if_contains("agentLabels"); labels && !labels->is_null()) {
    auto parsed = agent_labels_from_json(*labels, "agentLabels");
    if (!parsed) return std::unexpected(parsed.error());
    out.labels = std::move(*parsed);
  }
  return out;
}

Result<std::optional<std::string>> parse_opentofu_version(const json::object& body) {
  auto text = get_optional_string(body, "opentofuVersion", 256);
  if (!text) return std::unexpected(text.error());
  if (!*text || (*text)->empty()) return std::optional<std::string>{};
  if (auto constraint = protocol::parse_version_constraint(**text); !constraint)
    return std::unexpected(constraint.error().with_context("opentofuVersion"));
  return text;
}

}  // namespace takosumi::controlplane

namespace takosumi::controlplane {

Result<json::object> filter_outputs(const json::object& values, const OutputAllowlist& allowlist) {
  json::object out;
  for (const auto& kv : values) {
    auto it = allowlist.find(std::string(kv.key()));
    if (it == allowlist.end()) continue;
    auto matches = protocol::output_type_matches(kv.value(), it->second.type);
    if (!matches)
      return std::unexpected(matches.error().with_context("output \"" + it->first + "\""));
    if (*matches) out[kv.key()] = kv.value();
  }
  return out;
}

}  // namespace takosumi::controlplane
