#include "crypto/temp_file.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <string>
#include <utility>

#include "common/fd_io.hpp"
#include "common/file_io.hpp"

namespace takosumi::crypto::detail {

Result<TempFile> TempFile::create_beside(const std::filesystem::path& target) {
  // Same directory as the target so the final rename stays on one filesystem (atomic).
  std::string name = target.string() + ".tmp.XXXXXX";
  UniqueFd fd(::mkostemp(name.data(), O_CLOEXEC));
  if (!fd.valid()) return std::unexpected(errno_error("create temporary file", name, errno));
  // mkostemp already uses 0600; fchmod documents the intent and ignores an odd umask.
  if (::fchmod(fd.get(), 0600) != 0) {
    int err = errno;
    ::unlink(name.c_str());
    return std::unexpected(errno_error("chmod", name, err));
  }
  return TempFile(target, name, std::move(fd));
}

TempFile::TempFile(std::filesystem::path target, std::filesystem::path path, UniqueFd fd)
    : target_(std::move(target)), path_(std::move(path)), fd_(std::move(fd)) {}

TempFile::TempFile(TempFile&& other) noexcept
    : target_(std::move(other.target_)),
      path_(std::exchange(other.path_, {})),
      fd_(std::move(other.fd_)) {}

TempFile::~TempFile() {
  fd_.reset();
  if (!path_.empty()) ::unlink(path_.c_str());
}

Status TempFile::write(std::span<const std::uint8_t> bytes) {
  return write_all(fd_.get(), bytes, path_);
}

Status TempFile::commit(Durability durability) {
  const bool durable = durability == Durability::durable;
  if (durable && ::fsync(fd_.get()) != 0)
    return std::unexpected(errno_error("fsync", path_, errno));
  fd_.reset();
  if (::rename(path_.c_str(), target_.c_str()) != 0)
    return std::unexpected(errno_error("rename into place", target_, errno));
  path_.clear();
  if (!durable) return {};
  auto parent = target_.parent_path();
  return fsync_directory(parent.empty() ? std::filesystem::path(".") : parent);
}

}  // namespace takosumi::crypto::detail
