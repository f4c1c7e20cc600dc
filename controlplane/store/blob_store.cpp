#include "controlplane/store/blob_store.hpp"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <system_error>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "common/unique_fd.hpp"
#include "crypto/random_ids.hpp"
#include "crypto/sha256.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::controlplane {
namespace fs = std::filesystem;

struct SharedBlobs {
  explicit SharedBlobs(Database connection) : db(std::move(connection)) {}
  std::mutex mutex;
  Database db;
};

namespace {

Result<std::shared_ptr<SharedBlobs>> connect_shared(const std::optional<PostgresSettings>& settings) {
  if (!settings) return std::shared_ptr<SharedBlobs>();
  PostgresSettings own = *settings;
  own.writers_lock = false;
  auto db = Database::connect_postgres(own);
  if (!db) return std::unexpected(db.error().with_context("blob store"));
  return std::make_shared<SharedBlobs>(std::move(*db));
}

// Reads up to n bytes (fewer only at the end of the file).
Result<std::string> read_some(int fd, std::size_t n, const fs::path& path) {
  std::string out(n, '\0');
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, out.data() + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return std::unexpected(errno_error("read", path, errno));
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  out.resize(got);
  return out;
}

Status write_all(int fd, std::string_view bytes, const fs::path& path) {
  while (!bytes.empty()) {
    const ssize_t w = ::write(fd, bytes.data(), bytes.size());
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return std::unexpected(errno_error("write", path, errno));
    bytes.remove_prefix(static_cast<std::size_t>(w));
  }
  return {};
}

Status durable_rename(const fs::path& temp, const fs::path& target) {
  {
    const UniqueFd fd(::open(temp.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) return std::unexpected(errno_error("open", temp, errno));
    if (::fsync(fd.get()) != 0) return std::unexpected(errno_error("fsync", temp, errno));
  }
  if (::chmod(temp.c_str(), 0600) != 0) return std::unexpected(errno_error("chmod", temp, errno));
  if (::rename(temp.c_str(), target.c_str()) != 0)
    return std::unexpected(errno_error("rename", target, errno));
  return fsync_directory(target.parent_path());
}

}  // namespace

Result<BlobStore> BlobStore::open(const fs::path& data_dir,
                                  const std::optional<PostgresSettings>& shared) {
  TAKOSUMI_TRY(ensure_directory(data_dir / "blobs", 0700));
  TAKOSUMI_TRY(remove_tree(data_dir / "tmp"));
  TAKOSUMI_TRY(ensure_directory(data_dir / "tmp", 0700));
  auto db = connect_shared(shared);
  if (!db) return std::unexpected(db.error());
  return BlobStore(data_dir, std::move(*db));
}

Result<BlobStore> BlobStore::open_shared(const fs::path& data_dir,
                                         const std::optional<PostgresSettings>& shared) {
  std::error_code ec;
  if (!fs::is_directory(data_dir / "blobs", ec) || !fs::is_directory(data_dir / "tmp", ec))
    return fail(errc::kConfigInvalid, data_dir.string() + " has no blobs/ and tmp/: is dataDir the "
                                      "data directory of a control plane that has served?");
  auto db = connect_shared(shared);
  if (!db) return std::unexpected(db.error());
  return BlobStore(data_dir, std::move(*db));
}

Result<fs::path> BlobStore::local_path(std::string_view sha256) const {
  if (!is_sha256_hex(sha256))
    return fail(errc::kInvalidArgument, "\"" + std::string(sha256.substr(0, 80)) +
                                            "\" is not a lowercase hex sha256");
  return root_ / "blobs" / std::string(sha256);
}

bool BlobStore::local(const fs::path& path) const {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

Result<fs::path> BlobStore::path_for(std::string_view sha256) const {
  auto path = local_path(sha256);
  if (!path || !shared_ || local(*path)) return path;
  TAKOSUMI_TRY(fetch(sha256, *path));
  return path;
}

Result<bool> BlobStore::contains(std::string_view sha256) const {
  auto path = local_path(sha256);
  if (!path) return false;
  if (local(*path)) return true;
  if (!shared_) return false;
  std::lock_guard lock(shared_->mutex);
  auto found = shared_->db.single_integer("SELECT count(*) FROM blobs WHERE sha256 = ?", sha256);
  if (!found) return std::unexpected(found.error().with_context("blob store"));
  return *found > 0;
}

fs::path BlobStore::new_temp_path() const { return root_ / "tmp" / crypto::new_id("upload"); }

Status BlobStore::adopt(const fs::path& temp, std::string_view sha256) const {
  auto target = local_path(sha256);
  if (!target) return std::unexpected(target.error());
  // Into the database from the upload just checked (not from a local copy that may have rotted),
  // then here: an upload is answered only once every replica can read it.
  TAKOSUMI_TRY(share(temp, sha256));
  if (local(*target)) {
    std::error_code ec;
    fs::remove(temp, ec);
    return {};
  }
  return durable_rename(temp, *target);
}

Result<std::string> BlobStore::put(std::string_view bytes) const {
  std::string sha = crypto::sha256_hex(bytes);
  auto target = local_path(sha);
  if (!target) return std::unexpected(target.error());
  if (!local(*target)) TAKOSUMI_TRY(write_file_atomic(*target, bytes, 0600));
  TAKOSUMI_TRY(share(*target, sha));
  return sha;
}

// Blobs this data directory holds that the database does not (stored before the blobs were
// shared, or whose sharing was interrupted): each is checked against its name and shared, so
// no other replica ever misses one. A file that does not hash to its name is left out, loudly.
Status BlobStore::share_local_blobs() const {
  auto shared = share_local(false);
  if (!shared) return std::unexpected(shared.error());
  return {};
}

Result<std::int64_t> BlobStore::share_all_local_blobs() const { return share_local(true); }

Result<std::int64_t> BlobStore::share_local(bool strict) const {
  if (!shared_) return 0;
  std::int64_t blobs = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root_ / "blobs", ec)) {
    const std::string name = entry.path().filename().string();
    if (!is_sha256_hex(name) || !entry.is_regular_file()) {
      if (strict)
        return fail(errc::kStateIntegrityFailed,
                    "blob store: " + entry.path().string() +
                        " is not a blob (blobs/ holds only files named by their SHA-256)");
      continue;
    }
    ++blobs;
    {
      std::lock_guard lock(shared_->mutex);
      auto present = shared_->db.single_integer("SELECT count(*) FROM blobs WHERE sha256 = ?", name);
      if (!present) return std::unexpected(present.error().with_context("blob store"));
      if (*present > 0) continue;
    }
    if (auto shared = share(entry.path(), name); !shared) {
      if (strict || shared.error().code != errc::kStateIntegrityFailed)
        return std::unexpected(shared.error());
      spdlog::error("blob store: {}", shared.error().to_string());
    }
  }
  if (ec) return fail(errc::kIoError, "list " + (root_ / "blobs").string() + ": " + ec.message());
  return blobs;
}

// Checked against its name first, so a file that is not what its name says writes nothing.
// Then the chunks, then the blobs row that says the blob is whole: a reader never sees half a
// blob. A chunk is written over while its blob is not whole yet (what an interrupted or refused
// copy left), never after: a whole blob is never rewritten.
Status BlobStore::share(const fs::path& file, std::string_view sha256) const {
  if (!shared_) return {};
  std::lock_guard lock(shared_->mutex);
  Database& db = shared_->db;
  auto present = db.single_integer("SELECT count(*) FROM blobs WHERE sha256 = ?", sha256);
  if (!present) return std::unexpected(present.error().with_context("blob store"));
  if (*present > 0) return {};
  auto not_what_it_says = [&] {
    return fail(errc::kStateIntegrityFailed,
                "blob store: " + file.string() + " does not hash to its name; not shared");
  };
  auto actual = crypto::sha256_file_hex(file);
  if (!actual) return std::unexpected(actual.error());
  if (*actual != sha256) return not_what_it_says();
  const UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return std::unexpected(errno_error("open", file, errno));
  crypto::Sha256 hash;  // again on the way: the file must not have changed since
  std::int64_t size = 0, seq = 0;
  for (;; ++seq) {
    auto chunk = read_some(fd.get(), kBlobChunkBytes, file);
    if (!chunk) return std::unexpected(chunk.error());
    if (chunk->empty() && seq > 0) break;
    hash.update(*chunk);
    size += static_cast<std::int64_t>(chunk->size());
    TAKOSUMI_TRY(with_context(
        db.run("INSERT INTO blob_chunks (sha256, seq, data) VALUES (?, ?, decode(?, 'base64'))"
               " ON CONFLICT (sha256, seq) DO UPDATE SET data = excluded.data"
               " WHERE NOT EXISTS (SELECT 1 FROM blobs WHERE blobs.sha256 = excluded.sha256)",
               sha256, seq, base64_encode(*chunk)),
        "blob store"));
    if (chunk->size() < kBlobChunkBytes) {
      ++seq;
      break;
    }
  }
  if (hash.final_hex() != sha256) return not_what_it_says();
  return with_context(db.run("INSERT INTO blobs (sha256, size, chunks) VALUES (?, ?, ?)"
                             " ON CONFLICT DO NOTHING",
                             sha256, size, seq),
                      "blob store");
}

// Chunk by chunk into tmp/, hashed on the way: a copy that does not hash to its name is never
// used (internal: the database holds a damaged blob).
Status BlobStore::fetch(std::string_view sha256, const fs::path& target) const {
  std::lock_guard lock(shared_->mutex);
  Database& db = shared_->db;
  auto chunks = db.single_integer("SELECT chunks FROM blobs WHERE sha256 = ?", sha256);
  if (!chunks) return std::unexpected(chunks.error().with_context("blob store"));
  if (*chunks == 0) return {};  // nobody has it: the caller finds no file
  const fs::path temp = new_temp_path();
  const UniqueFd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd.valid()) return std::unexpected(errno_error("open", temp, errno));
  crypto::Sha256 hash;
  auto written = [&]() -> Status {
    for (std::int64_t seq = 0; seq < *chunks; ++seq) {
      auto s = db.query("SELECT replace(encode(data, 'base64'), chr(10), '') FROM blob_chunks"
                        " WHERE sha256 = ? AND seq = ?",
                        sha256, seq);
      if (!s) return std::unexpected(s.error());
      auto row = s->step();
      if (!row) return std::unexpected(row.error().with_context("blob store"));
      if (!*row)
        return fail(errc::kInternal, "blob store: blob " + std::string(sha256) + " has no chunk " +
                                         std::to_string(seq) + " in the database");
      auto bytes = base64_decode(s->text(0));
      if (!bytes) return std::unexpected(bytes.error());
      hash.update(std::span<const std::uint8_t>(*bytes));
      TAKOSUMI_TRY(write_all(fd.get(), as_chars(*bytes), temp));
    }
    if (hash.final_hex() != sha256)
      return fail(errc::kStateIntegrityFailed, "blob store: the database's copy of blob " +
                                                   std::string(sha256) +
                                                   " does not hash to its name");
    return durable_rename(temp, target);
  }();
  if (!written) {
    std::error_code ec;
    fs::remove(temp, ec);
    // This replica's disk or the database failing is for a later try (a claim fails, the Run
    // waits), not a reason to fail the Run; a damaged copy is.
    if (written.error().code != errc::kStateIntegrityFailed &&
        written.error().code != errc::kUnavailable)
      return fail(errc::kUnavailable, written.error().message);
  }
  return written;
}

}  // namespace takosumi::controlplane
