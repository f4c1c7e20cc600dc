#include "controlplane/store/keyring.hpp"

#include "common/encoding.hpp"
#include "common/file_io.hpp"
#include "crypto/sealed_box.hpp"
#include "crypto/sha256.hpp"

namespace takosumi::controlplane {

Result<Keyring> Keyring::load_or_create(const std::filesystem::path& data_dir) {
  const auto dir = data_dir / "keys";
  TAKOSUMI_TRY(ensure_directory(dir, 0700));
  auto storage = crypto::load_or_create_box_key(dir / "storage.key");
  if (!storage) return std::unexpected(storage.error().with_context("storage key"));
  auto signing = crypto::load_or_create_sign_key(dir / "signing.key");
  if (!signing) return std::unexpected(signing.error().with_context("signing key"));
  TAKOSUMI_TRY(crypto::write_public_key_file(dir / "signing.pub",
                                             signing->public_key.to_base64()));
  // What another control plane seals a state transfer to (docs/backup-and-restore.md).
  TAKOSUMI_TRY(crypto::write_public_key_file(dir / "storage.pub",
                                             storage->public_key.to_base64()));
  return Keyring(std::move(*storage), std::move(*signing));
}

Keyring::Keyring(crypto::BoxKeyPair storage, crypto::SignKeyPair signing)
    : storage_(std::move(storage)),
      signing_(std::move(signing)),
      key_id_(crypto::sha256_hex(as_chars(storage_.public_key.bytes)).substr(0, 16)) {}

Status Keyring::check_dek(const crypto::EnvelopePrefix& prefix) const {
  auto dek = crypto::open_envelope_dek(prefix, storage_);
  if (!dek) return std::unexpected(dek.error());
  return {};
}

Result<std::string> Keyring::reseal_dek(const std::filesystem::path& envelope,
                                        const crypto::BoxPublicKey& to) const {
  auto prefix = crypto::read_envelope_prefix(envelope);
  if (!prefix) return std::unexpected(prefix.error());
  auto dek = crypto::open_envelope_dek(*prefix, storage_);
  if (!dek) return std::unexpected(dek.error());
  return base64_encode(crypto::seal(dek->span(), to));
}

Result<SecretBytes> Keyring::open_sealed(std::span<const std::uint8_t> sealed) const {
  return crypto::open_sealed(sealed, storage_);
}

}  // namespace takosumi::controlplane
