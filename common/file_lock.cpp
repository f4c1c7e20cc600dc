#include "common/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>

#include <cerrno>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"

namespace takosumi {

Result<FileLock> FileLock::take(const std::filesystem::path& file, int operation) {
  UniqueFd fd(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid()) return std::unexpected(errno_error("open lock", file, errno));
  while (::flock(fd.get(), operation) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK)
      return fail(errc::kConflict, "lock " + file.string() + " is held elsewhere");
    return std::unexpected(errno_error("lock", file, errno));
  }
  return FileLock(std::move(fd), file);
}

Result<FileLock> FileLock::acquire(const std::filesystem::path& file) {
  return take(file, LOCK_EX);
}

Result<FileLock> FileLock::try_acquire(const std::filesystem::path& file) {
  return take(file, LOCK_EX | LOCK_NB);
}

bool is_file_locked(const std::filesystem::path& file) {
  const UniqueFd fd(::open(file.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
  return fd.valid() && ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0;
}

}  // namespace takosumi
