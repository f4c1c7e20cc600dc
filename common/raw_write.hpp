#pragma once
// A whole buffer written to a descriptor with nothing but write(2): async-signal-safe, allocating
// nothing, so a child may call it between fork and exec. For the small plain-POSIX programs
// (takosumi-supervise, takosumi-confine) that link no project library; everywhere else
// common/fd_io.hpp's write_all, whose errors carry the path.
#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace takosumi {

// false when a write failed (EPIPE once the reader is gone, among others).
inline bool raw_write_all(int fd, const char* data, std::size_t size) noexcept {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace takosumi
