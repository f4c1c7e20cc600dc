#include "runner/state/run_workspace.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <cctype>
#include <string>

#include "common/error_codes.hpp"
#include "common/fd_io.hpp"
#include "common/file_io.hpp"
#include "common/unique_fd.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::runner {

bool is_safe_file_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || name == "." || name == "..") return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

Result<RunWorkspace> RunWorkspace::create(const std::filesystem::path& work_root,
                                          std::string_view run_id, std::int64_t attempt) {
  if (!is_safe_file_name(run_id))
    return fail(errc::kManifestInvalid, "run id \"" + std::string(run_id) + "\" is not a safe name");
  RunWorkspace ws(work_root / (std::string(run_id) + "-" + std::to_string(attempt)));
  auto made = [&]() -> Status {
    TAKOSUMI_TRY(ensure_directory(work_root, 0700));
    TAKOSUMI_TRY(remove_tree(ws.root_));
    TAKOSUMI_TRY(ensure_directory(ws.root_, 0700));
    TAKOSUMI_TRY(ensure_directory(ws.home(), 0700));
    TAKOSUMI_TRY(ensure_directory(ws.tmp(), 0700));
    TAKOSUMI_TRY(ensure_directory(ws.root_ / "capture", 0700));
    TAKOSUMI_TRY(ensure_directory(ws.agent_dir(), 0700));
    // Made now, empty, though Connections are written into it only before plan or apply: the
    // sandbox binds it read-only only if it exists when the sandbox starts, which can be before
    // the checkout (a module could otherwise make it, or a link in its place, before the agent).
    TAKOSUMI_TRY(ensure_directory(ws.credentials(), 0700));
    return {};
  }();
  if (!made)
    return fail(errc::kWorkspaceFailed, "workspace " + ws.root_.string() + ": " + made.error().message);
  return ws;
}

Result<RunWorkspace> RunWorkspace::open_existing(const std::filesystem::path& work_root,
                                                 std::string_view run_id, std::int64_t attempt) {
  if (!is_safe_file_name(run_id))
    return fail(errc::kManifestInvalid, "run id \"" + std::string(run_id) + "\" is not a safe name");
  RunWorkspace ws(work_root / (std::string(run_id) + "-" + std::to_string(attempt)));
  std::error_code ec;
  if (!std::filesystem::is_directory(std::filesystem::symlink_status(ws.root_, ec)))
    return fail(errc::kNotFound, "workspace " + ws.root_.string() + " is gone");
  return ws;
}

std::filesystem::path RunWorkspace::capture(std::string_view name) const {
  return root_ / "capture" / std::string(name);
}

Status RunWorkspace::check_regular_file(const std::filesystem::path& path) const {
  std::error_code ec;
  const auto real = std::filesystem::canonical(path, ec);
  const auto root = std::filesystem::canonical(root_, ec);
  auto refuse = [&](std::string_view why) {
    return fail(errc::kWorkspaceFailed, path.string() + " " + std::string(why) +
                                            "; the agent does not read what it cannot trust");
  };
  if (ec) return refuse("cannot be resolved");
  const auto rel = real.lexically_relative(root);
  if (rel.empty() || *rel.begin() == "..") return refuse("leads outside the Run's workspace");
  if (!std::filesystem::is_regular_file(std::filesystem::symlink_status(real, ec)) || ec)
    return refuse("is not a regular file");
  return {};
}

Status RunWorkspace::freeze(const std::filesystem::path& written,
                            const std::filesystem::path& copy, std::uint64_t max_bytes) const {
  TAKOSUMI_TRY(check_regular_file(written));
  const UniqueFd in(::open(written.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  if (!in.valid() || ::fstat(in.get(), &st) != 0)
    return std::unexpected(errno_error("open", written, errno));
  if (!S_ISREG(st.st_mode))
    return fail(errc::kWorkspaceFailed, written.string() + " is not a regular file");
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
    return fail(errc::kLimitExceeded, written.string() + " is " + std::to_string(st.st_size) +
                                          " bytes, more than the limit of " + std::to_string(max_bytes));
  (void)::unlink(copy.c_str());
  const UniqueFd out(::open(copy.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!out.valid()) return std::unexpected(errno_error("create", copy, errno));
  std::array<std::byte, 64 * 1024> buffer;
  for (std::uint64_t copied = 0;;) {
    auto n = read_full(in.get(), buffer, written);
    if (!n) return std::unexpected(n.error());
    copied += *n;
    if (copied > max_bytes)  // it grew after the size check
      return fail(errc::kLimitExceeded, written.string() + " grew past the limit while copied");
    TAKOSUMI_TRY(write_all(out.get(), std::span(buffer).first(*n), copy));
    if (*n < buffer.size()) return {};
  }
}

namespace {

// A directory beneath root, reached without following links (Linux 5.6+).
Result<UniqueFd> open_beneath(const std::filesystem::path& root, const std::filesystem::path& rel) {
  UniqueFd root_fd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!root_fd.valid()) return std::unexpected(errno_error("open", root, errno));
  if (rel.empty()) return root_fd;  // keeps O_CLOEXEC, which a dup() would lose
  struct open_how how {};
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  UniqueFd dir(static_cast<int>(::syscall(SYS_openat2, root_fd.get(), rel.c_str(), &how, sizeof how)));
  if (!dir.valid())
    return fail(errc::kWorkspaceFailed, (root / rel).string() + " is not a directory reached "
                                        "without links inside the checkout: " + std::strerror(errno));
  return dir;
}

std::string random_suffix() {
  std::array<unsigned char, 8> bytes{};
  if (::getrandom(bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) return "0";
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (auto b : bytes) out += {kHex[b >> 4], kHex[b & 15]};
  return out;
}

}  // namespace

Status RunWorkspace::write_in_source(const std::filesystem::path& path, std::string_view content) const {
  const auto rel = path.parent_path().lexically_relative(source());
  if (rel.empty() || *rel.begin() == "..")
    return fail(errc::kWorkspaceFailed, path.string() + " is not inside the checkout");
  auto dir = open_beneath(source(), rel == "." ? std::filesystem::path{} : rel);
  if (!dir) return std::unexpected(dir.error());
  // O_PATH descriptors cannot create entries: reopen the directory itself, still without links.
  const UniqueFd parent(::openat(dir->get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!parent.valid()) return std::unexpected(errno_error("open", path.parent_path(), errno));
  const std::string name = path.filename().string();
  const std::string temp = "." + name + ".takosumi-" + random_suffix();
  {
    const UniqueFd fd(::openat(parent.get(), temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd.valid()) return std::unexpected(errno_error("create", path.parent_path() / temp, errno));
    if (auto written = write_all(fd.get(), content, path); !written) {
      ::unlinkat(parent.get(), temp.c_str(), 0);
      return written;
    }
  }
  if (::renameat(parent.get(), temp.c_str(), parent.get(), name.c_str()) != 0) {
    const int err = errno;
    ::unlinkat(parent.get(), temp.c_str(), 0);
    return std::unexpected(errno_error("replace", path, err));
  }
  return {};
}

Status RunWorkspace::wipe() const { return remove_tree(root_); }

}  // namespace takosumi::runner
