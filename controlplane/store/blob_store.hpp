#pragma once
// Content-addressed files under <data>/blobs/<sha256>: the encrypted StateVersion and plan
// envelopes, backup documents (never plaintext). Uploads land in <data>/tmp first and are adopted
// only after their digest and framing were checked; adoption is fsync + rename + directory fsync.
// A blob is never rewritten once present.
//
// On a PostgreSQL store (store.driver postgres) every blob is also kept in the database, in
// chunks of kBlobChunkBytes (tables blobs and blob_chunks), so that every replica has every
// blob: blobs/ is then this replica's cache, filled from the database on first use and checked
// against the digest before it is used. Memory stays at one chunk whatever the blob's size. The
// database copy has its own connection (thread-safe: uploads are adopted on the blocking pool),
// whose writes take no writers' lock: its rows are content-addressed and written idempotently.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/encoding.hpp"  // is_sha256_hex, the check path_for applies
#include "common/error.hpp"
#include "controlplane/store/db/database.hpp"

namespace takosumi::controlplane {

inline constexpr std::size_t kBlobChunkBytes = 1 << 20;

struct SharedBlobs;

class BlobStore {
 public:
  // Creates blobs/ and tmp/ (0700) and removes leftovers of interrupted uploads. shared: the
  // PostgreSQL store whose database holds every blob too.
  static Result<BlobStore> open(const std::filesystem::path& data_dir,
                                const std::optional<PostgresSettings>& shared = std::nullopt);
  // The blob store of a data directory a server may be serving from: tmp/ (that server's
  // uploads in flight) is left as it is, and must exist.
  static Result<BlobStore> open_shared(const std::filesystem::path& data_dir,
                                       const std::optional<PostgresSettings>& shared = std::nullopt);

  // The file holding the blob, fetched from the database first when only it has the blob (the
  // path of a missing file when nobody has it). invalid_argument unless sha256 is 64 lowercase
  // hex characters; unavailable when the database or this disk fails (a later try may work);
  // state_integrity_failed when the database's copy does not hash to its name.
  Result<std::filesystem::path> path_for(std::string_view sha256) const;
  // Whether the blob is here or in the database.
  Result<bool> contains(std::string_view sha256) const;
  // A fresh path under tmp/ for an upload to stream into.
  std::filesystem::path new_temp_path() const;
  // Moves a checked temp file to blobs/<sha256> durably (and into the database); if the blob
  // exists, drops the temp file.
  Status adopt(const std::filesystem::path& temp, std::string_view sha256) const;
  // Stores bytes under their digest; returns the digest.
  Result<std::string> put(std::string_view bytes) const;
  // On a PostgreSQL store: shares every blob of blobs/ the database lacks (serve calls it once
  // at start). Nothing on SQLite.
  Status share_local_blobs() const;
  // migrate-store: the same, but a blob that does not hash to its name (or any file under blobs/
  // not named as a blob) stops it with state_integrity_failed naming it, instead of being left
  // behind with an error in the log. Returns how many blobs blobs/ holds.
  Result<std::int64_t> share_all_local_blobs() const;

 private:
  BlobStore(std::filesystem::path root, std::shared_ptr<SharedBlobs> shared)
      : root_(std::move(root)), shared_(std::move(shared)) {}
  Result<std::filesystem::path> local_path(std::string_view sha256) const;
  bool local(const std::filesystem::path& path) const;
  Status share(const std::filesystem::path& file, std::string_view sha256) const;
  Status fetch(std::string_view sha256, const std::filesystem::path& target) const;
  Result<std::int64_t> share_local(bool strict) const;

  std::filesystem::path root_;
  std::shared_ptr<SharedBlobs> shared_;
};

}  // namespace takosumi::controlplane
