#pragma once
// The takosumi-control subcommands; each returns the process exit code and reports problems on
// stderr. `serve` prints "listening on <address>:<port>" to stdout once bound.
#include <filesystem>
#include <optional>
#include <string>

#include "controlplane/store/keys/key_rotation.hpp"

namespace takosumi::controlplane {

int command_serve(const std::filesystem::path& config_file);
// Loads the config with the real loader and reports the first problem, without serving.
int command_check_config(const std::filesystem::path& config_file);
// Brings the configured store's schema to this binary's version (creating it in an empty store)
// and prints the versions before and after; a store newer than this binary is refused.
int command_migrate(const std::filesystem::path& config_file);
// Creates (or loads) the control keys in data_dir and prints the signing public key file's path.
int command_init_keys(const std::filesystem::path& data_dir);
// Rotates the storage or the signing key of a stopped control plane and its store (key_rotation.hpp)
// and prints the new public key and what to do next.
int command_rotate_keys(const std::filesystem::path& config_file, RotatedKey which);
// Restores the Workspace of a signed backup document into the configured store, its signature
// checked against source_key (the source's keys/signing.pub file, or its base64 text); prints the
// outcome as JSON (what POST /api/v1/workspaces/restore answers).
int command_restore(const std::filesystem::path& config_file, const std::string& source_key,
                    const std::filesystem::path& backup_file);
// Moves a SQLite installation into an empty PostgreSQL store (docs/operations.md "Moving a SQLite
// installation to PostgreSQL"): from is "sqlite:<dataDir>", to a postgresql:// URL (its password
// from password_file or libpq's PGPASSFILE). Every blob is checked against its SHA-256 on the
// way; a second run finds the records there and does nothing more. Prints what it did.
int command_migrate_store(const std::string& from, const std::string& to,
                          const std::optional<std::filesystem::path>& password_file);

}  // namespace takosumi::controlplane
