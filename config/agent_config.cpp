#include "config/agent_config.hpp"

#include <cstdlib>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "config/yaml_fields.hpp"

namespace takosumi::config {
namespace {

std::filesystem::path resolve(const std::filesystem::path& base, const std::string& p) {
  if (p.empty()) return {};
  std::filesystem::path path(p);
  return path.is_absolute() ? path : base / path;
}

Result<SecretBytes> load_pool_token(const YAML::Node& root, const std::filesystem::path& base,
                                    const Environment& env) {
  if (auto it = env.find("TAKOSUMI_POOL_TOKEN"); it != env.end() && !it->second.empty())
    return SecretBytes::from_string(it->second);
  auto file = yaml_string(root, "poolTokenFile", "", "");
  if (!file) return std::unexpected(file.error());
  if (file->empty())
    return fail(errc::kConfigInvalid,
                "no pool token: set poolTokenFile or the TAKOSUMI_POOL_TOKEN environment variable");
  auto text = read_file(resolve(base, *file), 4096);
  if (!text) return std::unexpected(text.error().with_context("poolTokenFile"));
  while (!text->empty() && (text->back() == '\n' || text->back() == '\r')) text->pop_back();
  if (text->empty()) return fail(errc::kConfigInvalid, "poolTokenFile " + *file + " is empty");
  auto token = SecretBytes::from_string(*text);
  std::fill(text->begin(), text->end(), '\0');
  return token;
}

Status load_control_plane(const YAML::Node& root, const std::filesystem::path& base,
                          const Environment& env, AgentConfig& c) {
  const YAML::Node cp = root["controlPlane"];
  TAKOSUMI_TRY(yaml_known_keys(cp,
                               {"url", "urls", "signingPublicKeyFile", "caFile", "clientCertFile",
                                "clientKeyFile", "allowInsecureHttp"},
                               "controlPlane"));
  auto url = yaml_string(cp, "url", "controlPlane", "");
  auto key = yaml_string(cp, "signingPublicKeyFile", "controlPlane", "");
  auto ca = yaml_string(cp, "caFile", "controlPlane", "");
  auto cert = yaml_string(cp, "clientCertFile", "controlPlane", "");
  auto client_key = yaml_string(cp, "clientKeyFile", "controlPlane", "");
  auto insecure = yaml_bool(cp, "allowInsecureHttp", "controlPlane", false);
  auto urls = yaml_strings(cp, "urls", "controlPlane");
  if (const Error* e = first_error(url, urls, key, ca, cert, client_key, insecure))
    return std::unexpected(*e);
  // urls: the replicas of one control plane (same keys, same store), tried in this order.
  if (!url->empty() && !urls->empty())
    return fail(errc::kConfigInvalid,
                "controlPlane: give url (one control plane) or urls (its replicas), not both");
  c.control_urls = urls->empty() ? std::vector<std::string>{*url} : *urls;
  if (auto it = env.find("TAKOSUMI_DEPLOY_CONTROL_URL"); it != env.end() && !it->second.empty())
    c.control_urls = {it->second};
  // No URL at all: an offline agent (docs/air-gapped.md), which only runs Run bundles.
  if (c.control_urls == std::vector<std::string>{""}) c.control_urls.clear();
  for (const auto& u : c.control_urls)
    if (u.rfind("http://", 0) != 0 && u.rfind("https://", 0) != 0)
      return fail(errc::kConfigInvalid,
                  "controlPlane.url (or each of controlPlane.urls) must start with https:// or "
                  "http:// (or set TAKOSUMI_DEPLOY_CONTROL_URL)" +
                      (u.empty() ? std::string() : ": \"" + u + "\" does not"));
  if (!c.control_urls.empty()) c.control_url = c.control_urls.front();
  if (key->empty())
    return fail(errc::kConfigInvalid,
                "controlPlane.signingPublicKeyFile is required: the agent only runs manifests "
                "signed by the pinned control-plane key");
  c.control_signing_key = resolve(base, *key);
  c.control_tls = {resolve(base, *ca), resolve(base, *cert), resolve(base, *client_key)};
  c.allow_insecure_http = *insecure;
  return {};
}

Status load_tofu(const YAML::Node& root, const std::filesystem::path& base, AgentConfig& c) {
  const YAML::Node tofu = root["tofu"];
  TAKOSUMI_TRY(yaml_known_keys(tofu, {"binary", "versionsDir", "providerMirror", "providerPins",
                                       "timeoutSeconds", "supervisor", "interruptGraceSeconds"},
                                "tofu"));
  auto pins = yaml_string(tofu, "providerPins", "tofu", "");
  if (!pins) return std::unexpected(pins.error());
  if (!pins->empty()) c.provider_pins = resolve(base, *pins);
  auto versions = yaml_string(tofu, "versionsDir", "tofu", "");
  if (!versions) return std::unexpected(versions.error());
  if (!versions->empty()) c.tofu_versions_dir = resolve(base, *versions);
  auto bin = yaml_string(tofu, "binary", "tofu", "/usr/local/bin/tofu");
  auto mirror = yaml_string(tofu, "providerMirror", "tofu", "");
  auto timeout = yaml_int(tofu, "timeoutSeconds", "tofu", 1800, 10, 7 * 24 * 3600);
  auto supervisor = yaml_string(tofu, "supervisor", "tofu", "");
  auto grace = yaml_int(tofu, "interruptGraceSeconds", "tofu", 30, 1, 3600);
  if (!bin) return std::unexpected(bin.error());
  if (!mirror) return std::unexpected(mirror.error());
  if (!timeout) return std::unexpected(timeout.error());
  if (!supervisor) return std::unexpected(supervisor.error());
  if (!grace) return std::unexpected(grace.error());
  c.supervisor_disabled = *supervisor == "none";
  if (!supervisor->empty() && !c.supervisor_disabled) c.supervisor = resolve(base, *supervisor);
  c.interrupt_grace = std::chrono::seconds(*grace);
  if (mirror->empty())
    return fail(errc::kConfigInvalid, "tofu.providerMirror is required (a filesystem mirror)");
  c.tofu_binary = resolve(base, *bin);
  c.provider_mirror = resolve(base, *mirror);
  c.tofu_timeout = std::chrono::seconds(*timeout);
  return {};
}

Status load_agent_fields(const YAML::Node& root, const std::filesystem::path& base,
                         const Environment& env, AgentConfig& c) {
  auto name = yaml_string(root, "name", "", "");
  auto labels = yaml_strings(root, "labels", "");
  auto concurrency = yaml_int(root, "concurrency", "", 1, 1, 64);
  auto state = yaml_string(root, "stateDir", "", "/var/lib/takosumi-agent");
  auto work = yaml_string(root, "workDir", "", "/run/takosumi-agent/work");
  auto wait = yaml_int(root, "claimWaitSeconds", "", 20, 0, 30);
  auto beat = yaml_int(root, "heartbeatSeconds", "", 10, 1, 300);
  auto level = load_log_level(root);
  auto format = load_log_format(root);
  auto ephemeral = yaml_bool(root, "ephemeral", "", false);
  auto patterns = yaml_strings(root, "dataLossPatterns", "");
  if (!patterns) return std::unexpected(patterns.error());
  c.data_loss_patterns = *patterns;
  if (const Error* e = first_error(name, labels, concurrency, state, work, wait, beat, level,
                                  format, ephemeral))
    return std::unexpected(*e);
  if (auto it = env.find("TAKOSUMI_AGENT_NAME"); it != env.end() && !it->second.empty())
    *name = it->second;
  if (name->empty())
    return fail(errc::kConfigInvalid,
                "name is required (the agent's name; or TAKOSUMI_AGENT_NAME in the environment)");
  c.name = *name;
  c.labels = *labels;
  c.concurrency = *concurrency;
  c.state_dir = resolve(base, *state);
  c.work_dir = resolve(base, *work);
  c.claim_wait = std::chrono::seconds(*wait);
  c.heartbeat_interval = std::chrono::seconds(*beat);
  c.log_level = *level;
  c.log_format = *format;
  c.ephemeral = *ephemeral;
  return {};
}

// What Runs execute or load must not be writable from inside a Run, not even by renaming a
// directory above it (a bind mount over the path itself does not stop that): no
// sandbox.writablePaths entry may hold, or lie inside, tofu.binary, tofu.versionsDir or
// tofu.providerMirror. Compared as the paths are now, links resolved.
Status check_writable_paths(const AgentConfig& c) {
  namespace fs = std::filesystem;
  if (!c.sandbox.enabled) return {};
  const auto real = [](const fs::path& p) {
    std::error_code ec;
    auto r = fs::weakly_canonical(p, ec);
    return ec ? p.lexically_normal() : r;
  };
  const auto within = [](const fs::path& inner, const fs::path& outer) {
    const auto rel = inner.lexically_relative(outer);
    return !rel.empty() && *rel.begin() != "..";
  };
  const std::pair<const char*, fs::path> executed[] = {{"tofu.binary", c.tofu_binary},
                                                       {"tofu.versionsDir", c.tofu_versions_dir},
                                                       {"tofu.providerMirror", c.provider_mirror}};
  for (const auto& w : c.sandbox.writable_paths) {
    const auto writable = real(w);
    for (const auto& [key, path] : executed) {
      if (path.empty()) continue;
      const auto target = real(path);
      if (within(target, writable) || within(writable, target))
        return fail(errc::kConfigInvalid,
                    "sandbox.writablePaths: \"" + w.string() + "\" overlaps " + key + " (" +
                        path.string() + "): a Run could replace what later Runs execute; keep "
                        "the two apart");
    }
  }
  return {};
}

}  // namespace

Environment process_environment(const std::vector<std::string>& names) {
  Environment env;
  for (const auto& n : names)
    if (const char* v = std::getenv(n.c_str())) env[n] = v;
  return env;
}

Result<AgentConfig> load_agent_config(const std::filesystem::path& file, const Environment& env) {
  auto root = yaml_load_file(file.string());
  if (!root) return std::unexpected(root.error());
  const auto base = std::filesystem::absolute(file).parent_path();
  auto checked = [&]() -> Result<AgentConfig> {
    if (!root->IsMap())
      return fail(errc::kConfigInvalid, "the document must be a mapping of settings "
                                        "(docs/configuration.md; systemd/agent.yaml.example)");
    TAKOSUMI_TRY(yaml_known_keys(*root,
                                 {"controlPlane", "poolTokenFile", "name", "labels", "concurrency",
                                  "stateDir", "workDir", "tofu", "claimWaitSeconds",
                                  "heartbeatSeconds", "logLevel", "logFormat", "ephemeral",
                                  "dataLossPatterns", "sandbox", "limits", "policy", "hooks",
                                  "metrics", "source"},
                                 ""));
    AgentConfig c;
    TAKOSUMI_TRY(load_control_plane(*root, base, env, c));
    TAKOSUMI_TRY(load_tofu(*root, base, c));
    TAKOSUMI_TRY(load_agent_fields(*root, base, env, c));
    TAKOSUMI_TRY(load_sandbox(*root, base, c.sandbox));
    TAKOSUMI_TRY(check_writable_paths(c));
    TAKOSUMI_TRY(load_limits(*root, c.limits));
    TAKOSUMI_TRY(load_source(*root, base, c.source));
    TAKOSUMI_TRY(load_pool_policy(*root, c.policy));
    TAKOSUMI_TRY(load_hooks(*root, c.hooks));
    TAKOSUMI_TRY(load_metrics(*root, "", c.metrics));
    c.policy.network = c.sandbox.network ? protocol::NetworkMode::full : protocol::NetworkMode::none;
    // An offline agent never registers: it has no pool token unless one is given anyway.
    if (c.control_urls.empty() && !(*root)["poolTokenFile"] && !env.contains("TAKOSUMI_POOL_TOKEN"))
      return c;
    auto token = load_pool_token(*root, base, env);
    if (!token) return std::unexpected(token.error());
    c.pool_token = std::move(*token);
    return c;
  }();
  if (!checked) return std::unexpected(checked.error().with_context(file.string()));
  return checked;
}

}  // namespace takosumi::config
