#pragma once
// Where the takosumi CLI finds its control plane, in order of precedence: the command line
// (--url, --token-file, --ca-file, --client-cert, --client-key), the environment
// (TAKOSUMI_DEPLOY_CONTROL_URL, TAKOSUMI_DEPLOY_CONTROL_TOKEN), then ~/.config/takosumi/config.yaml
// (url, token or tokenFile, caFile, clientCertFile, clientKeyFile; owner-only since it may hold
// the token). The token never comes from a plain command-line value: argv is readable by every
// user of the host.
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "common/error.hpp"
#include "common/secret_bytes.hpp"
#include "net/tls_context.hpp"

namespace takosumi::cli {

struct CommandLineSettings {
  std::string url;
  std::filesystem::path token_file;
  std::filesystem::path ca_file;
  std::filesystem::path client_cert_file;
  std::filesystem::path client_key_file;
  std::filesystem::path config_file;  // default: $XDG_CONFIG_HOME or ~/.config, /takosumi/config.yaml
  bool allow_insecure_http = false;
};

struct Settings {
  std::string url;
  SecretBytes token;
  net::TlsClientFiles tls;
  bool allow_insecure_http = false;  // plain http to an address that is not loopback
};

using Environment = std::map<std::string, std::string>;

// config_invalid (naming the setting and where it came from) when no URL or token is found or a
// file cannot be read; key_file_insecure for a config file or token file others may read.
Result<Settings> resolve_settings(const CommandLineSettings& flags, const Environment& env);

}  // namespace takosumi::cli
