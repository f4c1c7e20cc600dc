#pragma once
// Internal to crypto/: a temporary sibling of an output path (mode 0600). commit() makes it the
// output atomically (by rename; see Durability); destroying an uncommitted TempFile
// removes it, so every early error return leaves the directory as it was.
#include <cstdint>
#include <filesystem>
#include <span>

#include "common/error.hpp"
#include "common/unique_fd.hpp"

namespace takosumi::crypto::detail {

class TempFile {
 public:
  static Result<TempFile> create_beside(const std::filesystem::path& target);
  ~TempFile();
  TempFile(TempFile&& other) noexcept;
  TempFile& operator=(TempFile&&) = delete;
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  Status write(std::span<const std::uint8_t> bytes);
  // durable: fsync, rename, fsync of the directory (an envelope that must survive a power loss).
  // scratch: only the atomic rename (a plaintext in a Run's workspace, which recovery rebuilds
  // from the envelopes anyway; its fsync was half the cost of a decrypt).
  enum class Durability { durable, scratch };
  Status commit(Durability durability = Durability::durable);

 private:
  TempFile(std::filesystem::path target, std::filesystem::path path, UniqueFd fd);

  std::filesystem::path target_;
  std::filesystem::path path_;  // empty once committed or moved from
  UniqueFd fd_;
};

}  // namespace takosumi::crypto::detail
