#include "controlplane/store/keys/secret_storage.hpp"

#include "common/encoding.hpp"
#include "common/error_codes.hpp"
#include "crypto/sealed_box.hpp"

namespace takosumi::controlplane {

Result<std::string> seal_for_storage(const protocol::SecretBundle& bundle, const Keyring& keys) {
  TAKOSUMI_TRY(protocol::validate_secret_bundle(bundle));
  const SecretBytes text = protocol::serialize_secret_bundle(bundle);
  if (text.size() > protocol::kMaxSecretBundleBytes)
    return fail(errc::kInvalidArgument, "the values take " + std::to_string(text.size()) +
                                            " bytes as JSON, more than the limit of 512 KiB");
  auto sealed = crypto::seal(text.span(), keys.storage_public_key());
  if (sealed.empty()) return fail(errc::kCryptoFailed, "sealing to the storage key failed");
  return base64_encode(sealed);
}

Result<protocol::SecretBundle> open_from_storage(std::string_view sealed_base64,
                                                 const Keyring& keys) {
  auto sealed = base64_decode(sealed_base64);
  if (!sealed) return fail(errc::kInternal, "stored sealed secrets are not base64");
  auto text = keys.open_sealed(*sealed);
  if (!text) return std::unexpected(text.error().with_context("open stored secrets"));
  return protocol::parse_secret_bundle(text->reveal_as_string());
}

}  // namespace takosumi::controlplane
