#include "controlplane/commands.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <boost/json/serialize.hpp>
#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "common/version.hpp"
#include "controlplane/api/workspace_backup.hpp"
#include "controlplane/control_plane.hpp"
#include "controlplane/store/keys/key_binding.hpp"
#include "controlplane/store/keys/key_rotation.hpp"
#include "controlplane/store/db/schema.hpp"
#include "controlplane/store/db/store_copy.hpp"
#include "crypto/keys.hpp"
#include "net/control_url.hpp"
#include "net/tls_context.hpp"
#include "common/failure_codes.hpp"

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

namespace {

// The port of a control plane serving from config's dataDir on this host: its control.port names
// one and something accepts connections there.
std::optional<int> serving_port(const ControlConfig& config) {
  auto text = read_file(config.data_dir / "control.port", 32);
  if (!text) return std::nullopt;
  int port = 0;
  if (std::from_chars(text->data(), text->data() + text->size(), port).ec != std::errc{} ||
      port <= 0 || port > 65535)
    return std::nullopt;
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  boost::system::error_code ec;
  auto address = boost::asio::ip::make_address(config.listen_address, ec);
  if (ec || address.is_unspecified()) address = boost::asio::ip::make_address("127.0.0.1");
  socket.connect({address, static_cast<unsigned short>(port)}, ec);
  if (ec) return std::nullopt;
  return port;
}

}  // namespace

int command_rotate_keys(const std::filesystem::path& config_file, RotatedKey which) {
  log_to_stderr();
  auto config = load_control_config(config_file, env_api_token());
  if (!config) return report(config.error());
  // Never a new store or new keys for a mistyped dataDir, nor root-owned keys the service cannot
  // read: only what a control plane served, as its owner.
  if (auto existing = check_existing_data_dir(*config); !existing) return report(existing.error());
  if (auto serving = serving_port(*config)) {
    return report(Error{std::string(errc::kConflict),
                        "a control plane is serving from dataDir " + config->data_dir.string() +
                            " (port " + std::to_string(*serving) +
                            "): stop it, and every other replica of its store, before rotating "
                            "its keys"});
  }
  auto db = open_store(*config);
  if (!db) return report(db.error());
  if (auto current = check_schema_current(*db); !current) return report(current.error());
  auto rotated = rotate_key(config->data_dir, *db, which);
  if (!rotated) return report(rotated.error());
  const std::string name = which == RotatedKey::storage ? "storage" : "signing";
  std::cout << name << " key rotated: new public key " << rotated->new_public_key << "\n";
  if (which == RotatedKey::storage)
    std::cout << "the old key is in keys/retired/ and keeps opening what was sealed to it\n";
  else
    std::cout << "every agent registers again at its next call and takes Runs only once it pins "
                 "the new keys/signing.pub (controlPlane.signingPublicKeyFile)\n";
  std::cout << "copy keys/ to every replica of this store before starting it\n";
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

int command_migrate_store(const std::string& from, const std::string& to,
                          const std::optional<std::filesystem::path>& password_file) {
  log_to_stderr();
  constexpr std::string_view kSqlite = "sqlite:";
  if (!from.starts_with(kSqlite) || from.size() == kSqlite.size())
    return report(Error{std::string(errc::kInvalidArgument),
                        "--from must be sqlite:<dataDir>, the data directory of the control "
                        "plane to move (the one holding control.db and keys/)"});
  const std::filesystem::path data_dir = from.substr(kSqlite.size());
  for (const char* part : {"control.db", "keys/signing.key", "keys/storage.key"})
    if (std::error_code ec; !std::filesystem::is_regular_file(data_dir / part, ec))
      return report(Error{std::string(errc::kConfigInvalid),
                          data_dir.string() + " has no " + part +
                              ": --from names the data directory of a control plane on SQLite"});
  if (!to.starts_with("postgresql://") && !to.starts_with("postgres://"))
    return report(Error{std::string(errc::kInvalidArgument),
                        "--to must be a postgresql:// URL of the (empty) database to move into"});
  if (auto checked = check_postgres_url(to); !checked)
    return report(Error{checked.error().code, "--to: " + checked.error().message});
  if (to.find('@') != std::string::npos && to.find(':', to.find("://") + 3) < to.find('@'))
    spdlog::warn("--to carries a password, which other users of this host can read in the "
                 "process list; prefer --password-file or PGPASSFILE");
  const PostgresSettings target_settings{to, password_file};

  auto source = Database::open_sqlite(data_dir / "control.db");
  if (!source) return report(source.error());
  if (auto current = check_schema_current(*source); !current)
    return report(current.error().with_context("the source"));
  auto keys = Keyring::load_or_create(data_dir);
  if (!keys) return report(keys.error());
  auto target = Database::connect_postgres(target_settings);
  if (!target) return report(target.error().with_context("the target"));
  if (auto schema = prepare_schema(*target); !schema)
    return report(schema.error().with_context("the target"));

  // The source's writers wait from here on, so what is moved is one moment of it; stop its
  // control plane first all the same (what it would write later is left behind).
  Transaction reading(*source);
  if (auto begun = reading.begun(); !begun) return report(begun.error());
  // Blobs first (content-addressed, so sharing one again is harmless), each checked against its
  // name; then the records, the keys binding and the check that every blob the records name is
  // there, in one transaction of the target: a failure leaves it as it was.
  auto blobs = BlobStore::open_shared(data_dir, target_settings);
  if (!blobs) return report(blobs.error());
  auto shared = blobs->share_all_local_blobs();
  if (!shared) return report(shared.error());
  auto copied = copy_records(*source, *target, [&]() -> Status {
    TAKOSUMI_TRY(bind_keys(*target, *keys));
    auto missing = missing_blobs(*target);
    if (!missing) return std::unexpected(missing.error());
    if (!missing->empty())
      return fail(errc::kStateIntegrityFailed,
                  "the records name blobs the source's blobs/ does not have (" + *missing +
                      "): restore them into " + (data_dir / "blobs").string() +
                      " from a backup and run migrate-store again");
    return {};
  });
  if (!copied) return report(copied.error());
  if (copied->already_copied)
    std::cout << "the target holds this installation already (as many records of each table, "
                 "the same keys, every blob named there): nothing to do\n";
  else
    std::cout << "moved " << copied->rows << " record(s) of " << copied->tables << " table(s) and "
              << *shared << " blob(s), each checked against its SHA-256; serve with store.driver "
                 "postgres and this dataDir's keys/\n";
  return 0;
}

}  // namespace takosumi::controlplane
