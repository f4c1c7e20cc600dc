#pragma once
// Small filesystem helpers that turn errno into an Error naming the path. Writes are durable:
// data goes to a temporary sibling, is fsync'd, then renamed over the target, and the directory
// is fsync'd, so a crash leaves either the old or the new content.
#include <sys/stat.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "common/unique_fd.hpp"

namespace takosumi {

Error errno_error(std::string_view what, const std::filesystem::path& path, int err);

// A file opened for reading and the fstat of that very descriptor: what is judged (type, mode,
// size) belongs to the bytes that are read, even if the path is replaced meanwhile.
struct OpenedFile {
  UniqueFd fd;
  struct stat st;
};
// Opens a regular file read-only (close-on-exec, no controlling terminal); not_found when it is
// missing, invalid_argument when it is not a regular file, io_error otherwise.
Result<OpenedFile> open_regular_file(const std::filesystem::path& path);

// Reads a whole file; fails with payload_too_large past max_bytes.
Result<std::string> read_file(const std::filesystem::path& path, std::size_t max_bytes);
// Atomically replaces path with content, created with the given mode (default 0600).
Status write_file_atomic(const std::filesystem::path& path, std::string_view content,
                         unsigned mode = 0600);
// Creates the directory and parents; new directories get the given mode.
Status ensure_directory(const std::filesystem::path& path, unsigned mode = 0700);
Status fsync_directory(const std::filesystem::path& path);
// Removes a tree; missing is success.
Status remove_tree(const std::filesystem::path& path);

}  // namespace takosumi
