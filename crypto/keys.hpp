#pragma once
// X25519 (sealing) and Ed25519 (signing) keys and their files. A key file holds one secret key as
// text ("takosumi-key v1 <algorithm>\n<base64>\n", algorithm x25519 or ed25519); the base64 is
// always 32 bytes: the X25519 secret key, or the Ed25519 seed (the public half is re-derived, so
// a file cannot hold mismatched halves). It is created 0600 and refused with key_file_insecure
// when group or world can read or write it. Public keys travel as base64.
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "common/secret_bytes.hpp"

namespace takosumi::crypto {

struct BoxPublicKey {
  std::array<std::uint8_t, 32> bytes{};
  std::string to_base64() const;
  // invalid_argument unless text is base64 of 32 bytes that is not a low-order point.
  static Result<BoxPublicKey> from_base64(std::string_view text);
};

struct SignPublicKey {
  std::array<std::uint8_t, 32> bytes{};
  std::string to_base64() const;
  static Result<SignPublicKey> from_base64(std::string_view text);
};

struct BoxKeyPair {
  BoxPublicKey public_key;
  SecretBytes secret_key;  // 32 bytes
  static BoxKeyPair generate();
};

struct SignKeyPair {
  SignPublicKey public_key;
  SecretBytes secret_key;  // 64 bytes (libsodium's seed || public form)
  static SignKeyPair generate();
};

// Loads the key at path; errors: not_found, key_file_insecure, key_file_invalid.
Result<BoxKeyPair> load_box_key(const std::filesystem::path& path);
Result<SignKeyPair> load_sign_key(const std::filesystem::path& path);
// Loads the key, or generates one and writes it (0600, atomically) when the file does not exist.
Result<BoxKeyPair> load_or_create_box_key(const std::filesystem::path& path);
Result<SignKeyPair> load_or_create_sign_key(const std::filesystem::path& path);
// A public key file holds one base64 line; used to pin the control plane's signing key, so it is
// refused with key_file_insecure when group or world can write it. Errors: not_found,
// key_file_insecure, key_file_invalid.
Result<SignPublicKey> load_sign_public_key(const std::filesystem::path& path);
// Writes base64 (which must decode to 32 bytes) plus a newline, atomically, mode 0644.
Status write_public_key_file(const std::filesystem::path& path, std::string_view base64);
// Any other private file (a TLS key in PEM, a stored credential): read through one descriptor and
// refused with key_file_insecure when group or others may access it. Errors as above, and
// key_file_invalid past max_bytes.
Result<SecretBytes> read_private_file(const std::filesystem::path& path, std::size_t max_bytes);

}  // namespace takosumi::crypto
