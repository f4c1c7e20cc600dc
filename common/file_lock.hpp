#pragma once
// An advisory exclusive lock (flock(2)) on a file, held for as long as the FileLock lives.
// The lock belongs to the open file description: a second FileLock on the same file waits or
// is refused even within one process, and no child inherits it (O_CLOEXEC). Used for the git
// cache, the agent's state directory and (probed) the workspace lock of takosumi-supervise.
#include <filesystem>
#include <utility>

#include "common/error.hpp"
#include "common/unique_fd.hpp"

namespace takosumi {

class FileLock {
 public:
  // Opens the file (created 0600 when missing, never through a symlink) and waits until the
  // lock is free. io_error naming the file.
  static Result<FileLock> acquire(const std::filesystem::path& file);
  // Like acquire without the wait: conflict when another holder has the lock.
  static Result<FileLock> try_acquire(const std::filesystem::path& file);

  const std::filesystem::path& file() const { return file_; }

 private:
  FileLock(UniqueFd fd, std::filesystem::path file) : fd_(std::move(fd)), file_(std::move(file)) {}
  static Result<FileLock> take(const std::filesystem::path& file, int operation);

  UniqueFd fd_;  // closing it releases the lock
  std::filesystem::path file_;
};

// True when the file exists and someone holds its lock. Creates nothing; the lock is taken only
// for the instant of the probe. A file that cannot be opened counts as not locked.
bool is_file_locked(const std::filesystem::path& file);

}  // namespace takosumi
