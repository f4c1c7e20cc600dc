#include "common/fd_io.hpp"

#include <unistd.h>

#include <cerrno>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"

namespace takosumi {

Status write_all(int fd, std::span<const std::byte> bytes, const std::filesystem::path& what) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::unexpected(errno_error("write", what, errno));
    bytes = bytes.subspan(static_cast<std::size_t>(n));
  }
  return {};
}

Result<std::size_t> read_full(int fd, std::span<std::byte> buf, const std::filesystem::path& what) {
  std::size_t got = 0;
  while (got < buf.size()) {
    const ssize_t n = ::read(fd, buf.data() + got, buf.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::unexpected(errno_error("read", what, errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  return got;
}

Result<std::string> read_all(int fd, std::size_t max_bytes, const std::filesystem::path& what) {
  std::string out;
  char buf[64 * 1024];
  for (;;) {
    auto n = read_full(fd, std::as_writable_bytes(std::span(buf)), what);
    if (!n) return std::unexpected(n.error());
    if (out.size() + *n > max_bytes)
      return fail(errc::kPayloadTooLarge,
                  what.string() + " is larger than " + std::to_string(max_bytes) + " bytes");
    out.append(buf, *n);
    if (*n < sizeof buf) return out;
  }
}

Status close_checked(UniqueFd fd, const std::filesystem::path& what) {
  if (!fd.valid()) return {};
  // Linux frees the descriptor even when close fails, so it is never retried.
  if (::close(fd.release()) != 0) return std::unexpected(errno_error("close", what, errno));
  return {};
}

}  // namespace takosumi
