#include "controlplane/store/keys/keyring.hpp"

#include "common/encoding.hpp"
#include "common/file_io.hpp"
#include "crypto/sealed_box.hpp"
#include "crypto/sha256.hpp"

namespace takosumi::controlplane {

std::string storage_key_id(const crypto::BoxPublicKey& key) {
  return crypto::sha256_hex(as_chars(key.bytes)).substr(0, 16);
}

Result<Keyring> Keyring::load_or_create(const std::filesystem::path& data_dir) {
  const auto dir = data_dir / "keys";
  TAKOSUMI_TRY(ensure_directory(dir, 0700));
  std::vector<crypto::BoxKeyPair> retired;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "retired", ec)) {
    if (entry.path().extension() != ".key") continue;
    auto key = crypto::load_box_key(entry.path());
    if (!key)
      return std::unexpected(key.error().with_context("retired storage key " + entry.path().string()));
    retired.push_back(std::move(*key));
  }
  if (ec && ec != std::errc::no_such_file_or_directory)
    return std::unexpected(errno_error("read the retired storage keys in", dir / "retired", ec.value()));
  auto storage = crypto::load_or_create_box_key(dir / "storage.key");
  if (!storage) return std::unexpected(storage.error().with_context("storage key"));
  auto signing = crypto::load_or_create_sign_key(dir / "signing.key");
  if (!signing) return std::unexpected(signing.error().with_context("signing key"));
  TAKOSUMI_TRY(crypto::write_public_key_file(dir / "signing.pub",
                                             signing->public_key.to_base64()));
  // What another control plane seals a state transfer to (docs/backup-and-restore.md).
  TAKOSUMI_TRY(crypto::write_public_key_file(dir / "storage.pub",
                                             storage->public_key.to_base64()));
  return Keyring(std::move(*storage), std::move(*signing), std::move(retired));
}

Keyring::Keyring(crypto::BoxKeyPair storage, crypto::SignKeyPair signing,
                 std::vector<crypto::BoxKeyPair> retired_storage)
    : storage_(std::move(storage)),
      signing_(std::move(signing)),
      key_id_(storage_key_id(storage_.public_key)),
      retired_(std::move(retired_storage)) {
  for (const auto& key : retired_) retired_ids_.push_back(storage_key_id(key.public_key));
}

Result<SecretBytes> Keyring::open_dek(const crypto::EnvelopePrefix& prefix) const {
  const crypto::BoxKeyPair* named = &storage_;
  for (std::size_t i = 0; i < retired_.size(); ++i)
    if (retired_ids_[i] == prefix.header.key_id) named = &retired_[i];
  auto dek = crypto::open_envelope_dek(prefix, *named);
  if (dek || retired_.empty()) return dek;
  if (named != &storage_) dek = crypto::open_envelope_dek(prefix, storage_);
  for (const auto& key : retired_) {
    if (dek) break;
    if (&key != named) dek = crypto::open_envelope_dek(prefix, key);
  }
  return dek;
}

Status Keyring::check_dek(const crypto::EnvelopePrefix& prefix) const {
  auto dek = open_dek(prefix);
  if (!dek) return std::unexpected(dek.error());
  return {};
}

Result<std::string> Keyring::reseal_dek(const std::filesystem::path& envelope,
                                        const crypto::BoxPublicKey& to) const {
  auto prefix = crypto::read_envelope_prefix(envelope);
  if (!prefix) return std::unexpected(prefix.error());
  auto dek = open_dek(*prefix);
  if (!dek) return std::unexpected(dek.error());
  return base64_encode(crypto::seal(dek->span(), to));
}

// A sealed box names no key: the current key first (everything sealed since the last rotation),
// then the retired ones.
Result<SecretBytes> Keyring::open_sealed(std::span<const std::uint8_t> sealed) const {
  auto opened = crypto::open_sealed(sealed, storage_);
  for (const auto& key : retired_) {
    if (opened) break;
    opened = crypto::open_sealed(sealed, key);
  }
  return opened;
}

}  // namespace takosumi::controlplane
