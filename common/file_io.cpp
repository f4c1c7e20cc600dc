#include "common/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "common/error_codes.hpp"
#include "common/fd_io.hpp"
#include "common/unique_fd.hpp"

namespace takosumi {

Error errno_error(std::string_view what, const std::filesystem::path& path, int err) {
  return Error{std::string(errc::kIoError),
               std::string(what) + " " + path.string() + ": " + std::strerror(err)};
}

Result<OpenedFile> open_regular_file(const std::filesystem::path& path) {
  OpenedFile file{UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY)), {}};
  if (!file.fd.valid()) {
    if (errno == ENOENT) return fail(errc::kNotFound, "open " + path.string() + ": no such file");
    return std::unexpected(errno_error("open", path, errno));
  }
  if (::fstat(file.fd.get(), &file.st) != 0) return std::unexpected(errno_error("stat", path, errno));
  if (!S_ISREG(file.st.st_mode))
    return fail(errc::kInvalidArgument, path.string() + " is not a regular file");
  return file;
}

Result<std::string> read_file(const std::filesystem::path& path, std::size_t max_bytes) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT)
      return fail(errc::kNotFound, "open " + path.string() + ": no such file");
    return std::unexpected(errno_error("open", path, errno));
  }
  return read_all(fd.get(), max_bytes, path);
}

Status fsync_directory(const std::filesystem::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return std::unexpected(errno_error("open directory", path, errno));
  if (::fsync(fd.get()) != 0) return std::unexpected(errno_error("fsync directory", path, errno));
  return {};
}

Status write_file_atomic(const std::filesystem::path& path, std::string_view content,
                         unsigned mode) {
  auto tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  {
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
    if (fd.get() < 0) return std::unexpected(errno_error("create", tmp, errno));
    if (::fchmod(fd.get(), mode) != 0) return std::unexpected(errno_error("chmod", tmp, errno));
    if (auto s = write_all(fd.get(), content, tmp); !s) {
      ::unlink(tmp.c_str());
      return s;
    }
    if (::fsync(fd.get()) != 0) {
      int err = errno;
      ::unlink(tmp.c_str());
      return std::unexpected(errno_error("fsync", tmp, err));
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return std::unexpected(errno_error("rename", path, err));
  }
  auto parent = path.parent_path();
  return fsync_directory(parent.empty() ? std::filesystem::path(".") : parent);
}

Status ensure_directory(const std::filesystem::path& path, unsigned mode) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return {};
  auto parent = path.parent_path();
  if (!parent.empty() && parent != path) TAKOSUMI_TRY(ensure_directory(parent, mode));
  if (::mkdir(path.c_str(), mode) != 0 && errno != EEXIST)
    return std::unexpected(errno_error("mkdir", path, errno));
  return {};
}

Status remove_tree(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) return fail(errc::kIoError, "remove " + path.string() + ": " + ec.message());
  return {};
}

}  // namespace takosumi
