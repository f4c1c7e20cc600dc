#include "crypto/keys.hpp"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "common/encoding.hpp"
#include "common/error_codes.hpp"
#include "common/fd_io.hpp"
#include "common/file_io.hpp"
#include "common/unique_fd.hpp"
#include "crypto/sodium_init.hpp"

namespace takosumi::crypto {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kBoxAlgorithm = "x25519";
constexpr std::string_view kSignAlgorithm = "ed25519";
constexpr std::size_t kSecretFileBytes = 32;  // both formats store 32 bytes (Ed25519: the seed)
constexpr std::size_t kMaxKeyFile = 1024;
constexpr int kBase64 = sodium_base64_VARIANT_ORIGINAL;

std::string first_line(std::string_view algorithm) {
  return "takosumi-key v1 " + std::string(algorithm) + "\n";
}

std::string mode_text(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// Reads a key file through one descriptor, so the mode we judge belongs to the bytes we read.
// The content goes into SecretBytes because secret key files hold the key's base64.
Result<SecretBytes> read_key_file(const fs::path& path, mode_t forbidden, std::string_view fix,
                                  std::size_t max_bytes = kMaxKeyFile) {
  auto file = open_regular_file(path);
  if (!file && file.error().code == errc::kNotFound)
    return fail(errc::kNotFound, "key file " + path.string() + " does not exist");
  if (!file && file.error().code == errc::kInvalidArgument)
    return fail(errc::kKeyFileInvalid, "key file " + path.string() + " is not a regular file");
  if (!file) return std::unexpected(file.error().with_context("key file"));
  const struct stat& st = file->st;
  if ((st.st_mode & forbidden) != 0)
    return fail(errc::kKeyFileInsecure,
                "key file " + path.string() + " has mode " + mode_text(st.st_mode) +
                    ", which lets other users access it; run `" + std::string(fix) + " " +
                    path.string() + "`");
  SecretBytes buf(max_bytes + 1);
  auto n = read_full(file->fd.get(), buf.mutable_span(), path);
  if (!n) return std::unexpected(n.error());
  if (*n > max_bytes)
    return fail(errc::kKeyFileInvalid, "key file " + path.string() + " is larger than " +
                                           std::to_string(max_bytes) + " bytes");
  return SecretBytes(buf.span().first(*n));
}

// Parses "takosumi-key v1 <algorithm>\n<base64>\n"; the final newline is optional so a file
// edited by hand still loads.
Result<SecretBytes> parse_secret_key(std::string_view text, std::string_view algorithm,
                                     const fs::path& path) {
  const std::string header = first_line(algorithm);
  if (!text.starts_with(header))
    return fail(errc::kKeyFileInvalid, "key file " + path.string() + ": first line must be \"" +
                                           header.substr(0, header.size() - 1) + "\"");
  std::string_view b64 = text.substr(header.size());
  if (b64.ends_with('\n')) b64.remove_suffix(1);
  SecretBytes key(kSecretFileBytes);
  std::size_t len = 0;
  const char* end = nullptr;
  // Decode straight into SecretBytes: the common helper returns an ordinary vector.
  if (sodium_base642bin(key.data(), key.size(), b64.data(), b64.size(), nullptr, &len, &end,
                        kBase64) != 0 ||
      end != b64.data() + b64.size() || len != kSecretFileBytes)
    return fail(errc::kKeyFileInvalid, "key file " + path.string() +
                                           ": second line must be the base64 of a " +
                                           std::to_string(kSecretFileBytes) + "-byte " +
                                           std::string(algorithm) + " secret key");
  return key;
}

Result<SecretBytes> load_secret(const fs::path& path, std::string_view algorithm) {
  auto text = read_key_file(path, 077, "chmod 600");
  if (!text) return std::unexpected(text.error());
  return parse_secret_key(text->reveal_as_string(), algorithm, path);
}

Status write_secret_key_file(const fs::path& path, std::string_view algorithm,
                             std::span<const std::uint8_t> secret) {
  const std::string header = first_line(algorithm);
  const std::size_t b64_len = sodium_base64_encoded_len(secret.size(), kBase64);  // incl. NUL
  SecretBytes content(header.size() + b64_len);
  std::memcpy(content.data(), header.data(), header.size());
  sodium_bin2base64(reinterpret_cast<char*>(content.data() + header.size()), b64_len,
                    secret.data(), secret.size(), kBase64);
  content.data()[content.size() - 1] = '\n';  // replaces the NUL terminator
  if (auto parent = path.parent_path(); !parent.empty()) TAKOSUMI_TRY(ensure_directory(parent));
  return write_file_atomic(path, content.reveal_as_string(), 0600);
}

BoxKeyPair box_pair_from_secret(SecretBytes secret) {
  BoxKeyPair pair;
  crypto_scalarmult_base(pair.public_key.bytes.data(), secret.data());
  pair.secret_key = std::move(secret);
  return pair;
}

SignKeyPair sign_pair_from_seed(const SecretBytes& seed) {
  SignKeyPair pair;
  pair.secret_key = SecretBytes(crypto_sign_SECRETKEYBYTES);
  crypto_sign_seed_keypair(pair.public_key.bytes.data(), pair.secret_key.data(), seed.data());
  return pair;
}

template <class Key>
Result<Key> public_key_from_base64(std::string_view text, std::string_view what) {
  auto bytes = base64_decode(text);
  Key key;
  if (!bytes || bytes->size() != key.bytes.size())
    return fail(errc::kInvalidArgument, std::string(what) + " must be the base64 of 32 bytes");
  std::copy(bytes->begin(), bytes->end(), key.bytes.begin());
  return key;
}

// A new key pair from libsodium's `keypair` (crypto_box_keypair, crypto_sign_keypair), the secret
// half written straight into zeroing memory.
template <class Pair>
Pair generate_pair(std::size_t secret_bytes, int (*keypair)(unsigned char*, unsigned char*)) {
  detail::ensure_sodium();
  Pair pair;
  pair.secret_key = SecretBytes(secret_bytes);
  keypair(pair.public_key.bytes.data(), pair.secret_key.data());
  return pair;
}

}  // namespace

std::string BoxPublicKey::to_base64() const { return base64_encode(bytes); }

Result<BoxPublicKey> BoxPublicKey::from_base64(std::string_view text) {
  auto key = public_key_from_base64<BoxPublicKey>(text, "X25519 public key");
  if (!key) return key;
  // Sealing to a low-order point fails (or would leak the DEK); refuse such keys at the edge.
  detail::ensure_sodium();
  std::uint8_t scalar[crypto_scalarmult_SCALARBYTES];
  std::uint8_t shared[crypto_scalarmult_BYTES];
  std::memset(scalar, 0x5a, sizeof scalar);
  if (crypto_scalarmult(shared, scalar, key->bytes.data()) != 0)
    return fail(errc::kInvalidArgument, "X25519 public key is a low-order point; it cannot be used");
  return key;
}

std::string SignPublicKey::to_base64() const { return base64_encode(bytes); }

Result<SignPublicKey> SignPublicKey::from_base64(std::string_view text) {
  return public_key_from_base64<SignPublicKey>(text, "Ed25519 public key");
}

BoxKeyPair BoxKeyPair::generate() {
  return generate_pair<BoxKeyPair>(crypto_box_SECRETKEYBYTES, crypto_box_keypair);
}

SignKeyPair SignKeyPair::generate() {
  return generate_pair<SignKeyPair>(crypto_sign_SECRETKEYBYTES, crypto_sign_keypair);
}

Result<BoxKeyPair> load_box_key(const fs::path& path) {
  detail::ensure_sodium();
  auto secret = load_secret(path, kBoxAlgorithm);
  if (!secret) return std::unexpected(secret.error());
  return box_pair_from_secret(std::move(*secret));
}

Result<SignKeyPair> load_sign_key(const fs::path& path) {
  detail::ensure_sodium();
  auto seed = load_secret(path, kSignAlgorithm);
  if (!seed) return std::unexpected(seed.error());
  return sign_pair_from_seed(*seed);
}

Result<BoxKeyPair> load_or_create_box_key(const fs::path& path) {
  auto loaded = load_box_key(path);
  if (loaded || loaded.error().code != errc::kNotFound) return loaded;
  BoxKeyPair pair = BoxKeyPair::generate();
  TAKOSUMI_TRY(write_secret_key_file(path, kBoxAlgorithm, pair.secret_key.span()));
  return pair;
}

Result<SignKeyPair> load_or_create_sign_key(const fs::path& path) {
  auto loaded = load_sign_key(path);
  if (loaded || loaded.error().code != errc::kNotFound) return loaded;
  SignKeyPair pair = SignKeyPair::generate();
  // The file keeps only the seed (the first half of libsodium's secret key); see keys.hpp.
  TAKOSUMI_TRY(write_secret_key_file(path, kSignAlgorithm,
                                     pair.secret_key.span().first(crypto_sign_SEEDBYTES)));
  return pair;
}

Result<SignPublicKey> load_sign_public_key(const fs::path& path) {
  // A pinned key others can write could be swapped for an attacker's, so writable is refused.
  auto text = read_key_file(path, 022, "chmod go-w");
  if (!text) return std::unexpected(text.error());
  std::string_view line = text->reveal_as_string();
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' '))
    line.remove_suffix(1);
  auto key = SignPublicKey::from_base64(line);
  if (!key)
    return fail(errc::kKeyFileInvalid, "public key file " + path.string() +
                                           " must hold one line: the base64 of a 32-byte "
                                           "Ed25519 public key");
  return key;
}

Status write_public_key_file(const fs::path& path, std::string_view base64) {
  auto bytes = base64_decode(base64);
  if (!bytes || bytes->size() != 32)
    return fail(errc::kInvalidArgument, "public key for " + path.string() +
                                            " must be the base64 of 32 bytes");
  if (auto parent = path.parent_path(); !parent.empty()) TAKOSUMI_TRY(ensure_directory(parent));
  return write_file_atomic(path, std::string(base64) + "\n", 0644);
}

Result<SecretBytes> read_private_file(const fs::path& path, std::size_t max_bytes) {
  return read_key_file(path, 077, "chmod 600", max_bytes);
}

}  // namespace takosumi::crypto
