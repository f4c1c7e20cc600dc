#include "controlplane/store/keys/key_rotation.hpp"

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "controlplane/store/keys/keyring.hpp"
#include "crypto/keys.hpp"

namespace takosumi::controlplane {
namespace {

struct KeyFiles {
  std::string name;  // "storage" | "signing"
  std::string column;
  std::filesystem::path current;
  std::filesystem::path next;
  std::filesystem::path public_file;
};

KeyFiles files_of(const std::filesystem::path& keys, RotatedKey which) {
  const std::string name = which == RotatedKey::storage ? "storage" : "signing";
  return {name, name + "_public_key", keys / (name + ".key"), keys / (name + ".key.next"),
          keys / (name + ".pub")};
}

// The public half of the key file at path, made there first when `create` (0600, atomically).
Result<std::string> public_of(const std::filesystem::path& path, RotatedKey which, bool create) {
  if (which == RotatedKey::storage) {
    auto key = create ? crypto::load_or_create_box_key(path) : crypto::load_box_key(path);
    if (!key) return std::unexpected(key.error());
    return key->public_key.to_base64();
  }
  auto key = create ? crypto::load_or_create_sign_key(path) : crypto::load_sign_key(path);
  if (!key) return std::unexpected(key.error());
  return key->public_key.to_base64();
}

// The old storage key, kept as keys/retired/storage-<key id>.key to open what was sealed to it.
Status retire_storage_key(const std::filesystem::path& keys, const std::filesystem::path& current) {
  auto key = crypto::load_box_key(current);
  if (!key) return std::unexpected(key.error());
  auto bytes = crypto::read_private_file(current, 4096);
  if (!bytes) return std::unexpected(bytes.error());
  const auto retired = keys / "retired";
  TAKOSUMI_TRY(ensure_directory(retired, 0700));
  TAKOSUMI_TRY(fsync_directory(keys));
  TAKOSUMI_TRY(write_file_atomic(retired / ("storage-" + storage_key_id(key->public_key) + ".key"),
                                 bytes->reveal_as_string(), 0600));
  return fsync_directory(retired);
}

}  // namespace

Result<KeyRotation> rotate_key(const std::filesystem::path& data_dir, Database& db,
                               RotatedKey which) {
  const auto keys = data_dir / "keys";
  const KeyFiles f = files_of(keys, which);
  auto current = public_of(f.current, which, false);
  if (!current) return std::unexpected(current.error().with_context(f.name + " key"));
  auto s = db.query("SELECT " + f.column + " FROM control_plane_keys");
  if (!s) return std::unexpected(s.error());
  auto row = s->step();
  if (!row) return std::unexpected(row.error());
  if (!*row)
    return fail(errc::kNotFound, "the store has no keys yet: a control plane binds its keys when "
                                 "it first serves the store, and only bound keys are rotated");
  const std::string bound = s->text(0);

  KeyRotation rotation{*current, ""};
  if (bound == *current) {
    auto next = public_of(f.next, which, true);
    if (!next) return std::unexpected(next.error().with_context("new " + f.name + " key"));
    rotation.new_public_key = *next;
    if (which == RotatedKey::storage) TAKOSUMI_TRY(retire_storage_key(keys, f.current));
    TAKOSUMI_TRY(in_transaction(db, [&]() -> Status {
      TAKOSUMI_TRY(db.run("UPDATE control_plane_keys SET " + f.column + " = ? WHERE " + f.column +
                              " = ?",
                          *next, *current));
      if (db.changes() != 1)
        return fail(errc::kConflict, "the store's " + f.name + " key changed during the rotation");
      // Every agent registered while it pinned the old signing key: its credential ends here, so
      // it registers again, which proves the key it pins now, before it takes another Run.
      if (which == RotatedKey::signing)
        TAKOSUMI_TRY(db.run("UPDATE agents SET token_issued_at = 0, previous_token_sha256 = NULL,"
                            " previous_token_expires_at = NULL"));
      return {};
    }));
  } else {
    // Interrupted after the store changed: the new key is there, not yet in place.
    auto next = public_of(f.next, which, false);
    if (!next || *next != bound)
      return fail(errc::kConfigInvalid,
                  "this dataDir's " + f.name + " key is not the one the store is bound to (" +
                      bound + "): rotate on a host whose keys/ directory the store was served "
                      "with, or copy keys/ from one");
    rotation = {"", *next};
  }
  // The public file first: once the key is in place the rotation is whole (a run after that one
  // rotates again), and a public file ahead of its key is written again by every start.
  TAKOSUMI_TRY(crypto::write_public_key_file(f.public_file, rotation.new_public_key));
  std::error_code ec;
  std::filesystem::rename(f.next, f.current, ec);
  if (ec) return std::unexpected(errno_error("rename", f.next, ec.value()));
  TAKOSUMI_TRY(fsync_directory(keys));
  return rotation;
}

}  // namespace takosumi::controlplane
