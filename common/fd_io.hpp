#pragma once
// The one read/write loop over a blocking file descriptor: short counts and EINTR are retried,
// errno becomes an io_error naming `what` (the file or pipe the descriptor belongs to). EAGAIN
// is an error here: non-blocking descriptors belong to Asio. (takosumi-supervise keeps its own
// async-signal-safe write loop; see supervise/supervise.cpp.)
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "common/unique_fd.hpp"

namespace takosumi {

// Writes every byte or fails; after a failure an unknown prefix may have been written.
Status write_all(int fd, std::span<const std::byte> bytes, const std::filesystem::path& what);

inline Status write_all(int fd, std::span<const std::uint8_t> bytes,
                        const std::filesystem::path& what) {
  return write_all(fd, std::as_bytes(bytes), what);
}

inline Status write_all(int fd, std::string_view text, const std::filesystem::path& what) {
  return write_all(fd, std::as_bytes(std::span(text)), what);
}

// Fills buf unless end of file comes first and returns the count, so a short count always
// means end of file (the envelope's chunk framing relies on that).
Result<std::size_t> read_full(int fd, std::span<std::byte> buf, const std::filesystem::path& what);

inline Result<std::size_t> read_full(int fd, std::span<std::uint8_t> buf,
                                     const std::filesystem::path& what) {
  return read_full(fd, std::as_writable_bytes(buf), what);
}

// Reads to end of file; payload_too_large as soon as more than max_bytes arrive.
Result<std::string> read_all(int fd, std::size_t max_bytes, const std::filesystem::path& what);

// Closes fd now and reports close(2)'s error: some filesystems (NFS) report a failed write
// only there. The descriptor is closed either way.
Status close_checked(UniqueFd fd, const std::filesystem::path& what);

}  // namespace takosumi
