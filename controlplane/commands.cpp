#include "controlplane/commands.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <boost/json/serialize.hpp>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "common/version.hpp"
#include "controlplane/api/workspace_backup.hpp"
#include "controlplane/control_plane.hpp"
#include "controlplane/store/schema.hpp"
#include "crypto/keys.hpp"
#include "net/control_url.hpp"
#include "net/tls_context.hpp"

namespace takosumi::controlplane {
namespace {

// stdout is reserved for the "listening on" line; logs go to stderr.
void log_to_stderr() {
  static bool done = false;
  if (done) return;
  done = true;
  spdlog::set_default_logger(spdlog::stderr_color_mt("takosumi-control"));
  if (const char* level = std::getenv("TAKOSUMI_LOG_LEVEL"))
    spdlog::set_level(spdlog::level::from_str(level));
}

std::optional<std::string> env_api_token() {
  if (const char* v = std::getenv(kApiTokenEnv)) return std::string(v);
  return std::nullopt;
}

int report(const Error& e) {
  std::cerr << "takosumi-control: " << e.to_string() << "\n";
  return 1;
}

}  // namespace

int command_serve(const std::filesystem::path& config_file) {
  log_to_stderr();
  auto config = load_control_config(config_file, env_api_token());
  if (!config) return report(config.error());
  const std::string address = config->listen_address;
  const char* scheme = config->tls ? "https" : "http";
  if (!config->tls && config->allow_insecure_http && !net::is_loopback_host(address))
    spdlog::warn("allowInsecureHttp: serving plain http on {}: API and pool tokens cross the "
                 "network in clear", address);
  SystemClock clock;
  auto control = ControlPlane::create(std::move(*config), clock);
  if (!control) return report(control.error());
  // Before the port file appears: a SIGHUP from a script that waits for it must not kill us.
  (*control)->stop_on_signals();
  auto port = (*control)->listen();
  if (!port) return report(port.error());
  std::cout << "listening on " << address << ":" << *port << std::endl;
  spdlog::info("takosumi-control {} serving {} on {}:{}, data in {}", TAKOSUMI_VERSION, scheme,
               address, *port, (*control)->data_dir().string());
  (*control)->run();
  spdlog::info("stopped");
  return 0;
}

int command_check_config(const std::filesystem::path& config_file) {
  auto config = load_control_config(config_file, env_api_token());
  if (!config) return report(config.error());
  // The TLS files as serve (and a SIGHUP) would load them.
  if (config->tls)
    if (auto tls = net::make_server_context(*config->tls); !tls) return report(tls.error());
  std::cout << "config ok: " << config_file.string() << "\n";
  return 0;
}

int command_migrate(const std::filesystem::path& config_file) {
  log_to_stderr();
  auto config = load_control_config(config_file, env_api_token());
  if (!config) return report(config.error());
  if (config->store_driver == StoreDriver::sqlite)
    if (auto st = ensure_directory(config->data_dir, 0700); !st) return report(st.error());
  auto db = open_store(*config);
  if (!db) return report(db.error());
  auto before = schema_version(*db);
  if (!before) return report(before.error());
  if (auto st = create_schema(*db); !st) return report(st.error());
  auto after = schema_version(*db);
  if (!after) return report(after.error());
  std::cout << "schema version " << *after << " (was " << *before << ")\n";
  return 0;
}

int command_init_keys(const std::filesystem::path& data_dir) {
  if (auto st = ensure_directory(data_dir, 0700); !st) return report(st.error());
  auto keys = Keyring::load_or_create(data_dir);
  if (!keys) return report(keys.error());
  std::cout << (data_dir / "keys" / "signing.pub").string() << "\n";
  return 0;
}

int command_restore(const std::filesystem::path& config_file, const std::string& source_key,
                    const std::filesystem::path& backup_file) {
  log_to_stderr();
  auto config = load_control_config(config_file, env_api_token());
  if (!config) return report(config.error());
  std::string key = source_key;
  std::error_code ec;
  if (std::filesystem::is_regular_file(source_key, ec)) {  // the source's keys/signing.pub
    auto text = read_file(source_key, 4096);
    if (!text) return report(text.error());
    key = *text;
    while (!key.empty() && (key.back() == '\n' || key.back() == '\r' || key.back() == ' '))
      key.pop_back();
  } else if (!crypto::SignPublicKey::from_base64(source_key)) {
    return report(Error{std::string(errc::kInvalidArgument),
                        "--source-key " + source_key +
                            " is neither a readable file nor the base64 of a 32-byte key: give "
                            "the source control plane's keys/signing.pub"});
  }
  auto document = read_file(backup_file, kMaxBackupBytes);
  if (!document) return report(document.error());
  SystemClock clock;
  auto control = ControlPlane::open_existing(std::move(*config), clock);
  if (!control) return report(control.error());
  auto restored = (*control)->restore_workspace(*document, key);
  if (!restored) return report(restored.error());
  std::cout << boost::json::serialize(*restored) << "\n";
  return 0;
}

}  // namespace takosumi::controlplane
