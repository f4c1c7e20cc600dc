#pragma once
// Internal to crypto/: the owning file descriptor (common/unique_fd.hpp) and the EINTR-safe loops the readers and writers
// share. Errors name the path the descriptor belongs to.
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <utility>

#include "common/error.hpp"
#include "common/file_io.hpp"
#include "common/unique_fd.hpp"

namespace takosumi::crypto::detail {

using UniqueFd = takosumi::UniqueFd;

// Fills buf unless end of file comes first; returns the number of bytes read, so a short count
// always means end of file (chunk framing relies on that).
inline Result<std::size_t> read_full(int fd, std::span<std::uint8_t> buf,
                                     const std::filesystem::path& path) {
  std::size_t got = 0;
  while (got < buf.size()) {
    ssize_t n = ::read(fd, buf.data() + got, buf.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::unexpected(errno_error("read", path, errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  return got;
}

inline Status write_full(int fd, std::span<const std::uint8_t> data,
                         const std::filesystem::path& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::unexpected(errno_error("write", path, errno));
    data = data.subspan(static_cast<std::size_t>(n));
  }
  return {};
}

}  // namespace takosumi::crypto::detail
