#pragma once
// Secrets at rest: a SecretBundle (one Connection's values, or one Capsule's sensitive variables)
// validated, serialized and sealed (crypto_box_seal) to the control plane's storage key, as base64
// for a TEXT column. Only the storage key pair opens it again; plaintext lives in SecretBytes only.
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "controlplane/store/keys/keyring.hpp"
#include "protocol/secret_bundle.hpp"

namespace takosumi::controlplane {

// invalid_argument when the bundle breaks protocol::validate_secret_bundle or its JSON would be
// larger than protocol::kMaxSecretBundleBytes.
Result<std::string> seal_for_storage(const protocol::SecretBundle& bundle, const Keyring& keys);
// Errors: envelope_wrong_key (sealed to another key or altered), manifest_invalid (bad bundle).
Result<protocol::SecretBundle> open_from_storage(std::string_view sealed_base64, const Keyring& keys);

}  // namespace takosumi::controlplane
