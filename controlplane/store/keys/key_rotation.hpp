#pragma once
// Rotating the control plane's keys in place (docs/operations.md, "Rotating the keys"), run by
// `takosumi-control rotate-keys` while every replica of the store is stopped:
// - storage: a new X25519 key seals what is stored from now on; the old one moves to
//   keys/retired/ and keeps opening what was sealed to it (StateVersions, plans, Connection
//   values, sensitive variables: nothing is re-encrypted, the state is never decrypted).
// - signing: a new Ed25519 key signs manifests from now on; the old one is gone, so agents must
//   pin the new keys/signing.pub.
// The store's key binding (key_binding.hpp) follows in the same step, so a replica still holding
// the old keys is refused at its start until it has the new keys/ directory.
// Interrupted anywhere, it is run again: a new key made before the store changed is used as it
// is, and one the store already names is only put in place.
#include <filesystem>
#include <string>

#include "common/error.hpp"
#include "controlplane/store/db/database.hpp"

namespace takosumi::controlplane {

enum class RotatedKey { storage, signing };

struct KeyRotation {
  std::string old_public_key;  // base64
  std::string new_public_key;  // base64
};

// config_invalid when the keys in data_dir are not the ones the store is bound to (nor a rotation
// of them that was interrupted), not_found when the store was never served.
Result<KeyRotation> rotate_key(const std::filesystem::path& data_dir, Database& db,
                               RotatedKey which);

}  // namespace takosumi::controlplane
