#pragma once
// The whole takosumi-control server: data directory, keys, the store (SQLite or PostgreSQL), blob store, the public and
// agent APIs, and the HTTP server, on one io_context thread plus a small pool for blocking work
// (libgit2, hashing uploads). The data directory holds control.db, blobs/, tmp/, keys/ and
// control.port.
#include <boost/json/object.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "controlplane/control_config.hpp"
#include "controlplane/store/keys/keyring.hpp"

namespace takosumi::controlplane {

// The configured store (store.driver): SQLite's <dataDir>/control.db (created owner-only), or
// a connection to the PostgreSQL database of store.url. The schema is not touched.
Result<Database> open_store(const ControlConfig& config);
// config_invalid unless dataDir exists, belongs to this user and holds what a control plane that
// has served leaves there (its keys; control.db on SQLite): what commands beside a server
// (restore, rotate-keys) require before they touch anything.
Status check_existing_data_dir(const ControlConfig& config);
// What a serving process does to the schema: SQLite's file is created or migrated; an empty
// PostgreSQL database gets the schema, one at an older version is refused (config_invalid:
// `takosumi-control migrate` first) as one newer than this binary is.
Status prepare_schema(Database& db);

class ControlPlane {
 public:
  // Creates the data directory (0700), loads or creates the keys, opens the store and prepares
  // its schema (prepare_schema), loads the TLS certificate and key (config_invalid when they do not). Does not
  // bind. The clock must outlive the ControlPlane.
  static Result<std::unique_ptr<ControlPlane>> create(ControlConfig config, const Clock& clock);
  // For a command beside a server that may be running on the same data directory
  // (`takosumi-control restore`): only what exists is opened (database, keys, blobs; nothing is
  // created, tmp/ is not cleaned, no TLS files are read), and only by the data directory's
  // owner, so nothing it writes is unreadable to the service. config_invalid otherwise.
  static Result<std::unique_ptr<ControlPlane>> open_existing(ControlConfig config, const Clock& clock);
  ~ControlPlane();

  // Binds the configured address and writes the bound port to <data>/control.port.
  Result<std::uint16_t> listen();
  // SIGINT/SIGTERM call stop(); SIGHUP calls reload_tls().
  void stop_on_signals();
  // Reads tls.certFile, keyFile and clientCaFile again: new connections use them, connections in
  // flight keep what they began with. A file that does not load is logged and the old ones stay.
  // Returns whether the new files loaded (they are in use once the server's thread takes them;
  // false also without tls).
  bool reload_tls();
  // Serves on the calling thread until stop() and all requests in flight have finished.
  void run();
  // Thread-safe: may be called from any thread, any number of times.
  void stop();

  // `takosumi-control restore`: restores a Workspace backup into this control plane's store as
  // POST /api/v1/workspaces/restore does (workspace_backup.hpp restore_workspace), without
  // serving. Safe beside a running server on the same store.
  Result<boost::json::object> restore_workspace(const std::string& document,
                                                std::string_view source_key_base64);

  const Keyring& keys() const;
  const std::filesystem::path& data_dir() const;

 private:
  struct Parts;
  enum class Opening { serve, existing };  // a server, or an offline command on its data
  static Result<std::unique_ptr<Parts>> open_parts(ControlConfig& config, const Clock& clock,
                                                   Opening opening);
  explicit ControlPlane(std::unique_ptr<Parts> parts);
  void refresh_status();
  std::unique_ptr<Parts> parts_;
};

}  // namespace takosumi::controlplane
