#pragma once
// SHA-256, hex-encoded lowercase; streaming so large files need constant memory. OpenSSL's EVP
// implementation: it uses the CPU's SHA extensions where there are some (about 5x libsodium's
// portable code on a CPU with SHA-NI), and every digest of a state, a plan or an artifact passes
// through here.
#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "common/error.hpp"

struct evp_md_ctx_st;

namespace takosumi::crypto {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view bytes);
  void update(std::span<const std::uint8_t> bytes);
  // Ends the hash; call once (one of the two).
  std::string final_hex();
  std::array<std::uint8_t, 32> final_digest();

 private:
  struct Free {
    void operator()(evp_md_ctx_st* ctx) const;
  };
  std::unique_ptr<evp_md_ctx_st, Free> ctx_;
};

std::string sha256_hex(std::string_view bytes);
Result<std::string> sha256_file_hex(const std::filesystem::path& path);

}  // namespace takosumi::crypto
