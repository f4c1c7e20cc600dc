#include "crypto/sha256.hpp"

#include <fcntl.h>

#include <cerrno>
#include <vector>

#include "common/encoding.hpp"
#include "common/error_codes.hpp"
#include "common/fd_io.hpp"
#include "common/file_io.hpp"
#include "common/unique_fd.hpp"
#include "crypto/sodium_init.hpp"

namespace takosumi::crypto {

Sha256::Sha256() {
  detail::ensure_sodium();
  crypto_hash_sha256_init(&state_);
}

void Sha256::update(std::string_view bytes) {
  auto b = as_bytes(bytes);
  crypto_hash_sha256_update(&state_, b.data(), b.size());
}

std::string Sha256::final_hex() {
  std::uint8_t digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256_final(&state_, digest);
  return hex_encode(digest);
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 h;
  h.update(bytes);
  return h.final_hex();
}

Result<std::string> sha256_file_hex(const std::filesystem::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT) return fail(errc::kNotFound, "open " + path.string() + ": no such file");
    return std::unexpected(errno_error("open", path, errno));
  }
  Sha256 h;
  std::vector<std::uint8_t> buf(64 * 1024);  // constant memory whatever the file size
  for (;;) {
    auto n = read_full(fd.get(), buf, path);
    if (!n) return std::unexpected(n.error());
    h.update(as_chars(std::span(buf).first(*n)));
    if (*n < buf.size()) return h.final_hex();
  }
}

}  // namespace takosumi::crypto
