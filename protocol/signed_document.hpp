#pragma once
// A document the control plane signs for use outside it (a Workspace backup,
// docs/backup-and-restore.md): the exact payload bytes (JSON text) with their SHA-256 and an
// Ed25519 signature, checked against a key the reader names before the payload is parsed.
//   {"format", "version", "payload": "<JSON text>", "sha256", "signature", "signPublicKey"}
// The signature covers format, version and payload together, so a document of one format is
// never accepted as another (nor as a job manifest).
#include <boost/json/object.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "crypto/keys.hpp"

namespace takosumi::protocol {

struct SignedDocument {
  std::string format;  // e.g. "takosumi-workspace-backup"
  std::int64_t version = 1;
  std::string payload;  // JSON text
  std::string sha256;   // lowercase hex of payload
  std::string signature;
  std::string sign_public_key;  // the signer's, for the reader to compare with the key it trusts
};

SignedDocument sign_document(std::string format, std::int64_t version, std::string payload,
                             const crypto::SignKeyPair& key);
std::string to_text(const SignedDocument& document);

// The payload of `text` (at most max_bytes) when it is a document of `format` and `version`
// signed by `trusted`. backup_invalid for anything malformed or of another format or version;
// backup_signature_invalid for a signature that is not trusted's over these bytes.
Result<boost::json::object> open_signed_document(std::string_view text, std::size_t max_bytes,
                                                 std::string_view format, std::int64_t version,
                                                 const crypto::SignPublicKey& trusted);

}  // namespace takosumi::protocol
