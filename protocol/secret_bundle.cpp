#include "protocol/secret_bundle.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <set>

#include "common/error_codes.hpp"
#include "protocol/credential_names.hpp"
#include "common/strict_json.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::protocol {
namespace {

namespace json = boost::json;

Status check_value(std::string_view where, const SecretBytes& value) {
  if (value.size() > kMaxSecretValueBytes)
    return fail(errc::kInvalidArgument, std::string(where) + ": a value may hold at most 64 KiB");
  return {};
}

Status validate_connection(const ConnectionSecret& c, std::set<std::string>& names) {
  const std::string where = "connection \"" + c.name + "\"";
  if (c.id.empty() || c.id.size() > 128) return fail(errc::kInvalidArgument, where + ": bad id");
  if (!is_qualified_provider_address(c.provider))
    return fail(errc::kInvalidArgument,
                where + ": provider \"" + c.provider.substr(0, 256) +
                    "\" must be a fully qualified source address such as "
                    "registry.opentofu.org/hashicorp/aws");
  if (c.values.empty() || c.values.size() > kMaxValuesPerConnection)
    return fail(errc::kInvalidArgument, where + ": needs 1 to 64 values");
  for (const auto& [name, value] : c.values) {
    if (auto ok = validate_credential_name(name); !ok)
      return std::unexpected(ok.error().with_context(where));
    TAKOSUMI_TRY(check_value(where + " value " + name, value));
    if (!names.insert(name).second)
      return fail(errc::kInvalidArgument,
                  where + ": credential name " + name + " is already set by another Connection of the Run");
  }
  return {};
}

SecretBytes take_string(json::string& s) {
  SecretBytes out = SecretBytes::from_string(std::string_view(s.data(), s.size()));
  std::fill(s.data(), s.data() + s.size(), '\0');
  return out;
}

Result<std::map<std::string, SecretBytes>> secret_map(json::object* o, std::string_view what) {
  std::map<std::string, SecretBytes> out;
  if (!o) return out;
  for (auto& kv : *o) {
    if (!kv.value().is_string())
      return fail(errc::kInvalidArgument,
                  std::string(what) + "." + std::string(kv.key()) + " must be a string");
    out.emplace(std::string(kv.key()), take_string(kv.value().get_string()));
  }
  return out;
}

Result<std::string> field(const json::object& o, std::string_view key, std::size_t max) {
  auto* v = o.if_contains(key);
  if (!v || !v->is_string() || v->get_string().size() > max)
    return fail(errc::kInvalidArgument, std::string(key) + " must be a string");
  return std::string(v->get_string());
}

Result<SecretBundle> from_json(json::object& root) {
  SecretBundle b;
  if (auto* conns = root.if_contains("connections")) {
    if (!conns->is_array()) return fail(errc::kInvalidArgument, "connections must be an array");
    for (auto& item : conns->get_array()) {
      if (!item.is_object()) return fail(errc::kInvalidArgument, "connections[] must be objects");
      auto& o = item.get_object();
      ConnectionSecret c;
      auto id = field(o, "id", 128);
      auto name = field(o, "name", 128);
      auto provider = field(o, "provider", 512);
      auto mode = field(o, "authMode", 16);
      for (auto* r : {&id, &name, &provider, &mode})
        if (!*r) return std::unexpected(r->error().with_context("connections[]"));
      auto parsed_mode = auth_mode_from_string(*mode);
      if (!parsed_mode)
        return fail(errc::kInvalidArgument, "connections[].authMode must be env or files");
      c.id = *id;
      c.name = *name;
      c.provider = *provider;
      c.mode = *parsed_mode;
      auto* values = o.if_contains("values");
      if (!values || !values->is_object())
        return fail(errc::kInvalidArgument, "connections[].values must be an object");
      auto v = secret_map(&values->get_object(), "values");
      if (!v) return std::unexpected(v.error());
      c.values = std::move(*v);
      b.connections.push_back(std::move(c));
    }
  }
  if (auto* source = root.if_contains("source")) {
    if (!source->is_object()) return fail(errc::kInvalidArgument, "source must be an object");
    auto& o = source->get_object();
    auto id = field(o, "connectionId", 128);
    if (!id) return std::unexpected(id.error().with_context("source"));
    auto* values = o.if_contains("values");
    if (!values || !values->is_object())
      return fail(errc::kInvalidArgument, "source.values must be an object");
    auto v = secret_map(&values->get_object(), "source.values");
    if (!v) return std::unexpected(v.error());
    auto credential = git_credential_from_values(*id, *v);
    if (!credential) return std::unexpected(credential.error().with_context("source"));
    b.source = std::move(*credential);
  }
  if (auto* vars = root.if_contains("sensitiveVariables")) {
    if (!vars->is_object()) return fail(errc::kInvalidArgument, "sensitiveVariables must be an object");
    auto v = secret_map(&vars->get_object(), "sensitiveVariables");
    if (!v) return std::unexpected(v.error());
    b.sensitive_variables = std::move(*v);
  }
  TAKOSUMI_TRY(validate_secret_bundle(b));
  return b;
}

}  // namespace

std::string_view to_string(AuthMode mode) { return mode == AuthMode::env ? "env" : "files"; }

std::optional<AuthMode> auth_mode_from_string(std::string_view text) {
  if (text == "env") return AuthMode::env;
  if (text == "files") return AuthMode::files;
  return std::nullopt;
}

bool is_qualified_provider_address(std::string_view address) {
  if (address.empty() || address.size() > 256) return false;
  int parts = 1;
  char prev = '/';
  for (char c : address) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
                    c == '_' || c == '/' || c == ':';
    if (!ok) return false;
    if (c == '/') {
      if (prev == '/') return false;
      ++parts;
    }
    prev = c;
  }
  return parts == 3 && prev != '/';
}

Status validate_secret_bundle(const SecretBundle& bundle) {
  if (bundle.connections.size() > kMaxConnectionsPerRun)
    return fail(errc::kInvalidArgument, "a Run may use at most 32 Connections");
  if (bundle.sensitive_variables.size() > kMaxSensitiveVariables)
    return fail(errc::kInvalidArgument, "a Capsule may have at most 128 sensitive variables");
  std::set<std::string> names;
  for (const auto& c : bundle.connections) TAKOSUMI_TRY(validate_connection(c, names));
  for (const auto& [name, value] : bundle.sensitive_variables) {
    if (!is_valid_variable_name(name))
      return fail(errc::kInvalidArgument, "sensitive variable name \"" + name.substr(0, 128) +
                                              "\" must match ^[A-Za-z_][A-Za-z0-9_-]*$");
    TAKOSUMI_TRY(check_value("sensitive variable " + name, value));
  }
  return {};
}

SecretBytes serialize_secret_bundle(const SecretBundle& bundle) {
  // Built by hand into zeroed-on-drop memory: a json::value would leave copies on the heap.
  SecretBytes out;
  auto append_string = [](std::vector<char>& buf, std::string_view s) {
    std::string quoted = json::serialize(json::string_view(s.data(), s.size()));
    buf.insert(buf.end(), quoted.begin(), quoted.end());
    std::fill(quoted.begin(), quoted.end(), '\0');
  };
  std::vector<char> buf;
  buf.reserve(64 * 1024);  // growth would leave unzeroed copies behind
  auto text = [&](std::string_view s) { buf.insert(buf.end(), s.begin(), s.end()); };
  auto secret_object = [&](const std::map<std::string, SecretBytes>& values) {
    text("{");
    bool first = true;
    for (const auto& [k, v] : values) {
      if (!first) text(",");
      first = false;
      append_string(buf, k);
      text(":");
      append_string(buf, v.reveal_as_string());
    }
    text("}");
  };
  text("{\"connections\":[");
  for (std::size_t i = 0; i < bundle.connections.size(); ++i) {
    const auto& c = bundle.connections[i];
    if (i) text(",");
    text("{\"id\":");
    append_string(buf, c.id);
    text(",\"name\":");
    append_string(buf, c.name);
    text(",\"provider\":");
    append_string(buf, c.provider);
    text(",\"authMode\":");
    append_string(buf, to_string(c.mode));
    text(",\"values\":");
    secret_object(c.values);
    text("}");
  }
  text("],\"sensitiveVariables\":");
  secret_object(bundle.sensitive_variables);
  if (const auto& s = bundle.source) {
    std::map<std::string, SecretBytes> values;
    values.emplace(std::string(kGitUsername), SecretBytes::from_string(s->username));
    if (s->is_ssh()) {
      values.emplace(std::string(kGitSshPrivateKey), s->private_key.clone());
      values.emplace(std::string(kGitSshKnownHosts), SecretBytes::from_string(s->known_hosts));
    } else {
      values.emplace(std::string(kGitToken), s->token.clone());
    }
    text(",\"source\":{\"connectionId\":");
    append_string(buf, s->connection_id);
    text(",\"values\":");
    secret_object(values);
    text("}");
  }
  text("}");
  out = SecretBytes(std::span(reinterpret_cast<const std::uint8_t*>(buf.data()), buf.size()));
  std::fill(buf.begin(), buf.end(), '\0');
  return out;
}

Result<SecretBundle> parse_secret_bundle(std::string_view text) {
  if (text.size() > kMaxSecretBundleBytes)
    return fail(errc::kManifestInvalid, "secret bundle is larger than 512 KiB");
  // The parser allocates from scratch memory we own and zero afterwards, so no copy of a value
  // stays behind on the heap (values are moved into SecretBytes and their JSON copies zeroed).
  SecretBytes scratch(text.size() * 4 + 16 * 1024);
  Result<SecretBundle> result = fail(errc::kManifestInvalid, "secret bundle: not parsed");
  {
    json::monotonic_resource mr(scratch.data(), scratch.size());
    json::parse_options opts;
    opts.max_depth = 16;
    auto v = parse_json_strict(text, opts, &mr);
    if (!v) {
      result = fail(errc::kManifestInvalid, "secret bundle: " + v.error().message);
    } else if (!v->is_object()) {
      result = fail(errc::kManifestInvalid, "secret bundle is not a JSON object");
    } else {
      auto parsed = from_json(v->get_object());
      if (parsed) result = std::move(parsed);
      else result = fail(errc::kManifestInvalid, "secret bundle: " + parsed.error().message);
    }
  }
  scratch.wipe();
  return result;
}

}  // namespace takosumi::protocol
