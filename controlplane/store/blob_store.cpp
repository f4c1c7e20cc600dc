#include "controlplane/store/blob_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "common/unique_fd.hpp"
#include "crypto/random_ids.hpp"
#include "crypto/sha256.hpp"

namespace takosumi::controlplane {
namespace fs = std::filesystem;

Result<BlobStore> BlobStore::open(const fs::path& data_dir) {
  TAKOSUMI_TRY(ensure_directory(data_dir / "blobs", 0700));
  TAKOSUMI_TRY(remove_tree(data_dir / "tmp"));
  TAKOSUMI_TRY(ensure_directory(data_dir / "tmp", 0700));
  return BlobStore(data_dir);
}

Result<BlobStore> BlobStore::open_shared(const fs::path& data_dir) {
  std::error_code ec;
  if (!fs::is_directory(data_dir / "blobs", ec) || !fs::is_directory(data_dir / "tmp", ec))
    return fail(errc::kConfigInvalid, data_dir.string() + " has no blobs/ and tmp/: is dataDir the "
                                      "data directory of a control plane that has served?");
  return BlobStore(data_dir);
}

Result<fs::path> BlobStore::path_for(std::string_view sha256) const {
  if (!is_sha256_hex(sha256))
    return fail(errc::kInvalidArgument, "\"" + std::string(sha256.substr(0, 80)) +
                                            "\" is not a lowercase hex sha256");
  return root_ / "blobs" / std::string(sha256);
}

bool BlobStore::contains(std::string_view sha256) const {
  auto p = path_for(sha256);
  std::error_code ec;
  return p && fs::is_regular_file(*p, ec);
}

fs::path BlobStore::new_temp_path() const { return root_ / "tmp" / crypto::new_id("upload"); }

Status BlobStore::adopt(const fs::path& temp, std::string_view sha256) const {
  auto target = path_for(sha256);
  if (!target) return std::unexpected(target.error());
  if (contains(sha256)) {
    std::error_code ec;
    fs::remove(temp, ec);
    return {};
  }
  {
    const UniqueFd fd(::open(temp.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) return std::unexpected(errno_error("open", temp, errno));
    if (::fsync(fd.get()) != 0) return std::unexpected(errno_error("fsync", temp, errno));
  }
  if (::chmod(temp.c_str(), 0600) != 0) return std::unexpected(errno_error("chmod", temp, errno));
  if (::rename(temp.c_str(), target->c_str()) != 0)
    return std::unexpected(errno_error("rename", *target, errno));
  return fsync_directory(target->parent_path());
}

Result<std::string> BlobStore::put(std::string_view bytes) const {
  std::string sha = crypto::sha256_hex(bytes);
  if (contains(sha)) return sha;
  auto target = path_for(sha);
  if (!target) return std::unexpected(target.error());
  TAKOSUMI_TRY(write_file_atomic(*target, bytes, 0600));
  return sha;
}

}  // namespace takosumi::controlplane
