#pragma once
// SHA-256 (libsodium), hex-encoded lowercase; streaming so large files need constant memory.
#include <sodium/crypto_hash_sha256.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace takosumi::crypto {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view bytes);
  // Ends the hash; call once.
  std::string final_hex();

 private:
  crypto_hash_sha256_state state_;
};

std::string sha256_hex(std::string_view bytes);
Result<std::string> sha256_file_hex(const std::filesystem::path& path);

}  // namespace takosumi::crypto
