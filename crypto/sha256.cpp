#include "crypto/sha256.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <openssl/evp.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "common/encoding.hpp"
#include "common/error_codes.hpp"
#include "common/fd_io.hpp"
#include "common/file_io.hpp"
#include "common/unique_fd.hpp"

namespace takosumi::crypto {
namespace {

// Fetched once: EVP_sha256() would look the implementation up again at every init.
const EVP_MD* sha256_md() {
  static EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return md;
}

// Neither can fail but for a broken OpenSSL installation (no default provider) or memory
// exhaustion; no digest could be trusted then, so the process stops rather than hash nothing.
void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fatal: OpenSSL SHA-256 unavailable (%s)\n", what);
  std::abort();
}

}  // namespace

void Sha256::Free::operator()(evp_md_ctx_st* ctx) const { EVP_MD_CTX_free(ctx); }

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  require(ctx_ != nullptr && sha256_md() != nullptr, "no digest context");
  require(EVP_DigestInit_ex(ctx_.get(), sha256_md(), nullptr) == 1, "init");
}

void Sha256::update(std::span<const std::uint8_t> bytes) {
  require(EVP_DigestUpdate(ctx_.get(), bytes.data(), bytes.size()) == 1, "update");
}

void Sha256::update(std::string_view bytes) { update(as_bytes(bytes)); }

std::array<std::uint8_t, 32> Sha256::final_digest() {
  std::array<std::uint8_t, 32> digest{};
  unsigned int len = 0;
  require(EVP_DigestFinal_ex(ctx_.get(), digest.data(), &len) == 1 && len == digest.size(),
          "final");
  return digest;
}

std::string Sha256::final_hex() { return hex_encode(final_digest()); }

std::string sha256_hex(std::string_view bytes) {
  Sha256 h;
  h.update(bytes);
  return h.final_hex();
}

Result<std::string> sha256_file_hex(const std::filesystem::path& path) {
  // Regular files only: a FIFO in a file's place must not block the reader forever.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid()) {
    if (errno == ENOENT) return fail(errc::kNotFound, "open " + path.string() + ": no such file");
    return std::unexpected(errno_error("open", path, errno));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return std::unexpected(errno_error("stat", path, errno));
  if (!S_ISREG(st.st_mode))
    return fail(errc::kInvalidArgument, path.string() + " is not a regular file");
  if (const int flags = ::fcntl(fd.get(), F_GETFL);
      flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0)
    return std::unexpected(errno_error("fcntl", path, errno));
  Sha256 h;
  std::vector<std::uint8_t> buf(64 * 1024);  // constant memory whatever the file size
  for (;;) {
    auto n = read_full(fd.get(), buf, path);
    if (!n) return std::unexpected(n.error());
    h.update(std::span<const std::uint8_t>(buf).first(*n));
    if (*n < buf.size()) return h.final_hex();
  }
}

}  // namespace takosumi::crypto
