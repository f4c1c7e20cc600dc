#pragma once
// Content-addressed files under <data>/blobs/<sha256>: the encrypted StateVersion and plan
// envelopes (never plaintext). Uploads land in <data>/tmp first and are adopted only after their
// digest and framing were checked; adoption is fsync + rename + directory fsync. A blob is never
// rewritten once present.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "common/encoding.hpp"  // is_sha256_hex, the check path_for applies
#include "common/error.hpp"

namespace takosumi::controlplane {

class BlobStore {
 public:
  // Creates blobs/ and tmp/ (0700) and removes leftovers of interrupted uploads.
  static Result<BlobStore> open(const std::filesystem::path& data_dir);
  // The blob store of a data directory a server may be serving from: tmp/ (that server's
  // uploads in flight) is left as it is, and must exist.
  static Result<BlobStore> open_shared(const std::filesystem::path& data_dir);

  // invalid_argument unless sha256 is 64 lowercase hex characters.
  Result<std::filesystem::path> path_for(std::string_view sha256) const;
  bool contains(std::string_view sha256) const;
  // A fresh path under tmp/ for an upload to stream into.
  std::filesystem::path new_temp_path() const;
  // Moves a checked temp file to blobs/<sha256> durably; if the blob exists, drops the temp file.
  Status adopt(const std::filesystem::path& temp, std::string_view sha256) const;
  // Stores bytes under their digest; returns the digest.
  Result<std::string> put(std::string_view bytes) const;

 private:
  explicit BlobStore(std::filesystem::path root) : root_(std::move(root)) {}
  std::filesystem::path root_;
};

}  // namespace takosumi::controlplane
