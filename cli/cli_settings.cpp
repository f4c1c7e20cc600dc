#include "cli/cli_settings.hpp"

#include <yaml-cpp/yaml.h>

#include "common/error_codes.hpp"
#include "crypto/keys.hpp"

namespace takosumi::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxConfig = 64 * 1024;

std::string value_of(const Environment& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() ? std::string() : it->second;
}

fs::path default_config_file(const Environment& env) {
  if (auto xdg = value_of(env, "XDG_CONFIG_HOME"); !xdg.empty())
    return fs::path(xdg) / "takosumi/config.yaml";
  if (auto home = value_of(env, "HOME"); !home.empty())
    return fs::path(home) / ".config/takosumi/config.yaml";
  return {};
}

std::string trim_newlines(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

Result<SecretBytes> read_token_file(const fs::path& file, const std::string& setting) {
  auto text = crypto::read_private_file(file, 4096);
  if (!text) return std::unexpected(text.error().with_context(setting));
  std::string token = trim_newlines(std::string(text->reveal_as_string()));
  if (token.empty()) return fail(errc::kConfigInvalid, setting + ": " + file.string() + " is empty");
  auto secret = SecretBytes::from_string(token);
  std::fill(token.begin(), token.end(), '\0');
  return secret;
}

// The config file's settings; the file is optional unless named on the command line.
struct FileSettings {
  std::string url;
  std::optional<SecretBytes> token;
  net::TlsClientFiles tls;
};

Result<FileSettings> read_config_file(const fs::path& file, bool required) {
  FileSettings out;
  std::error_code ec;
  if (file.empty() || (!required && !fs::exists(file, ec))) return out;
  auto text = crypto::read_private_file(file, kMaxConfig);
  if (!text) return std::unexpected(text.error().with_context("config file"));
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text->reveal_as_string()));
  } catch (const YAML::Exception& e) {
    return fail(errc::kConfigInvalid, file.string() + ": " + e.what());
  }
  if (!root.IsMap()) return fail(errc::kConfigInvalid, file.string() + ": must be a mapping");
  const fs::path base = file.parent_path();
  auto path_of = [&](const std::string& v) { return v.empty() || fs::path(v).is_absolute() ? fs::path(v) : base / v; };
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) return fail(errc::kConfigInvalid, file.string() + ": keys must be names");
    const auto key = kv.first.Scalar();
    if (!kv.second.IsScalar())
      return fail(errc::kConfigInvalid, file.string() + ": " + key + " must be a string");
    const auto value = kv.second.Scalar();
    if (key == "url") out.url = value;
    else if (key == "token") out.token = SecretBytes::from_string(value);
    else if (key == "tokenFile") {
      auto token = read_token_file(path_of(value), file.string() + ": tokenFile");
      if (!token) return std::unexpected(token.error());
      out.token = std::move(*token);
    } else if (key == "caFile") out.tls.ca_file = path_of(value);
    else if (key == "clientCertFile") out.tls.cert_file = path_of(value);
    else if (key == "clientKeyFile") out.tls.key_file = path_of(value);
    else
      return fail(errc::kConfigInvalid,
                  file.string() + ": unknown key \"" + key +
                      "\" (known: url, token, tokenFile, caFile, clientCertFile, clientKeyFile)");
  }
  return out;
}

}  // namespace

Result<Settings> resolve_settings(const CommandLineSettings& flags, const Environment& env) {
  const bool named = !flags.config_file.empty();
  auto file = read_config_file(named ? flags.config_file : default_config_file(env), named);
  if (!file) return std::unexpected(file.error());
  Settings s;
  s.url = !flags.url.empty() ? flags.url
          : !value_of(env, "TAKOSUMI_DEPLOY_CONTROL_URL").empty()
              ? value_of(env, "TAKOSUMI_DEPLOY_CONTROL_URL")
              : file->url;
  if (s.url.empty())
    return fail(errc::kConfigInvalid,
                "no control plane URL: pass --url, set TAKOSUMI_DEPLOY_CONTROL_URL, or put url: in "
                "~/.config/takosumi/config.yaml");
  if (!flags.token_file.empty()) {
    auto token = read_token_file(flags.token_file, "--token-file");
    if (!token) return std::unexpected(token.error());
    s.token = std::move(*token);
  } else if (auto env_token = value_of(env, "TAKOSUMI_DEPLOY_CONTROL_TOKEN"); !env_token.empty()) {
    s.token = SecretBytes::from_string(env_token);
  } else if (file->token) {
    s.token = std::move(*file->token);
  } else {
    return fail(errc::kConfigInvalid,
                "no API token: pass --token-file, set TAKOSUMI_DEPLOY_CONTROL_TOKEN, or put token: "
                "(or tokenFile:) in ~/.config/takosumi/config.yaml");
  }
  s.tls = file->tls;
  if (!flags.ca_file.empty()) s.tls.ca_file = flags.ca_file;
  if (!flags.client_cert_file.empty()) s.tls.cert_file = flags.client_cert_file;
  if (!flags.client_key_file.empty()) s.tls.key_file = flags.client_key_file;
  s.allow_insecure_http = flags.allow_insecure_http;
  s.tls.key_prefix = "";  // errors name the CLI's settings: caFile, clientCertFile, clientKeyFile
  return s;
}

}  // namespace takosumi::cli
