#pragma once
// The StateVersion / saved-plan envelope (ARCHITECTURE §4). Layout:
//   "TKSENV01" | u32 BE header length | header JSON (canonical) | u16 BE sealed-DEK length |
//   sealed DEK (crypto_box_seal of a fresh 32-byte DEK to the recipient) |
//   secretstream header (24 bytes) | chunks
// Lengths are exact: header ≤ 16 KiB, sealed DEK = crypto_box_SEALBYTES + 32. Header JSON keys, in
// this order, no whitespace: kind, capsuleId, runId, generation, lineage, serial, plaintextSize,
// plaintextSha256, keyId. Chunks are crypto_secretstream_xchacha20poly1305 messages: every chunk
// but the last holds exactly kChunkSize plaintext bytes (TAG_MESSAGE), the last fewer — possibly
// zero — and carries TAG_FINAL; each has the header JSON as additional data. Memory use does not
// grow with the payload size. Decryption writes to a temporary sibling and renames it into place
// only after the final tag and the plaintext digest check, so a bad input writes nothing.
// Distinct failure codes: envelope_malformed (framing), envelope_truncated (no final chunk),
// envelope_tampered (a chunk fails authentication / digest differs), envelope_wrong_key (DEK not
// sealed to us), envelope_header_mismatch (header is not what the caller expects).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "common/secret_bytes.hpp"
#include "crypto/keys.hpp"

namespace takosumi::crypto {

inline constexpr std::size_t kChunkSize = 64 * 1024;

struct EnvelopeHeader {
  std::string kind;  // "state" | "plan"
  std::string capsule_id;
  std::string run_id;       // the Run that produced it
  std::int64_t generation = 0;  // StateVersion generation the content belongs to (plans: prior)
  std::string lineage;
  std::int64_t serial = 0;
  std::string plaintext_sha256;  // filled in by encrypt_file
  std::string key_id;            // recipient key id
  std::int64_t plaintext_size = 0;  // filled in by encrypt_file; tells truncation from tampering
};

// What the reader insists on; unset fields are not checked.
struct EnvelopeExpectation {
  std::string kind;
  std::string capsule_id;
  std::optional<std::int64_t> generation;
  std::optional<std::string> plaintext_sha256;
};

// Header and sealed DEK, read without decrypting (the control plane uses this to re-seal the DEK).
struct EnvelopePrefix {
  EnvelopeHeader header;
  std::string header_json;  // exact bytes used as AAD
  std::vector<std::uint8_t> sealed_dek;
  std::size_t payload_offset = 0;  // where the secretstream header starts
};

struct EncryptedFile {
  EnvelopeHeader header;  // as written, plaintext_sha256 and plaintext_size set
  std::string sha256;     // of the envelope file, computed while it was written
};

// Encrypts the file at plaintext into an envelope at out (atomic, mode 0600) under a fresh DEK
// sealed to recipient.
Result<EncryptedFile> encrypt_file(const std::filesystem::path& plaintext,
                                    const std::filesystem::path& out, EnvelopeHeader header,
                                    const BoxPublicKey& recipient);

// bytes may be the whole envelope or just its start. Errors: envelope_malformed,
// envelope_truncated (bytes end before the sealed DEK does).
Result<EnvelopePrefix> parse_envelope_prefix(std::string_view bytes);
Result<EnvelopePrefix> read_envelope_prefix(const std::filesystem::path& path);
// The exact size of a well-formed envelope with this prefix, so a holder of no DEK (the control
// plane checking an upload) can refuse a truncated or padded file without decrypting it.
std::uint64_t expected_envelope_size(const EnvelopePrefix& prefix);

// Opens the sealed DEK of an envelope with the recipient's key pair. An altered sealed DEK is
// indistinguishable from one sealed to another key: both are envelope_wrong_key.
Result<SecretBytes> open_envelope_dek(const EnvelopePrefix& prefix, const BoxKeyPair& keys);

// Decrypts with a DEK (the agent gets the DEK re-sealed to it in the manifest). Checks the header
// against expect before writing anything. out appears whole or not at all, but is not fsynced:
// a plaintext is scratch, made again from its envelope after a crash.
Result<EnvelopeHeader> decrypt_file(const std::filesystem::path& envelope,
                                    const std::filesystem::path& out, const SecretBytes& dek,
                                    const EnvelopeExpectation& expect);

}  // namespace takosumi::crypto
