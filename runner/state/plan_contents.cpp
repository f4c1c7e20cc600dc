#include "runner/state/plan_contents.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "common/big_endian.hpp"
#include "common/error_codes.hpp"
#include "common/fd_io.hpp"
#include "common/file_io.hpp"
#include "common/unique_fd.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;

constexpr std::array<std::uint8_t, 7> kMagic{'T', 'K', 'S', 'P', 'L', 'A', 'N'};
constexpr std::size_t kCopyChunk = 64 * 1024;

Error malformed(const fs::path& contents, const std::string& why) {
  return Error{std::string(errc::kStateIntegrityFailed),
               "saved plan " + contents.filename().string() + ": " + why};
}

Result<UniqueFd> create_new(const fs::path& path) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid()) return std::unexpected(errno_error("create", path, errno));
  return fd;
}

// Reads exactly buf.size() bytes; a short read is a truncated file.
Status read_exact(int fd, std::span<std::uint8_t> buf, const fs::path& contents) {
  auto n = read_full(fd, buf, contents);
  if (!n) return std::unexpected(n.error());
  if (*n != buf.size()) return std::unexpected(malformed(contents, "truncated"));
  return {};
}

// Copies `size` bytes from `in` to `out` (both at their offsets).
Status copy_bytes(int in, int out, std::uint64_t size, const fs::path& from, const fs::path& to) {
  std::vector<std::uint8_t> buf(kCopyChunk);
  while (size > 0) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(size, buf.size()));
    auto n = read_full(in, std::span(buf).first(want), from);
    if (!n) return std::unexpected(n.error());
    if (*n == 0) return std::unexpected(malformed(from, "truncated"));
    TAKOSUMI_TRY(write_all(out, std::span<const std::uint8_t>(buf).first(*n), to));
    size -= *n;
  }
  return {};
}

}  // namespace

Status write_plan_contents(const fs::path& plan_file, const std::vector<SecretBytes>& values,
                           const fs::path& out) {
  auto plan = open_regular_file(plan_file);
  if (!plan) return std::unexpected(plan.error());
  const auto plan_size = static_cast<std::uint64_t>(plan->st.st_size);
  auto fd = create_new(out);
  if (!fd) return std::unexpected(fd.error());
  const auto written = [&]() -> Status {
    TAKOSUMI_TRY(write_all(fd->get(), std::span<const std::uint8_t>(kMagic), out));
    const auto revision = static_cast<std::uint8_t>(kPlanSecretsRevision);
    TAKOSUMI_TRY(write_all(fd->get(), std::span(&revision, 1), out));
    TAKOSUMI_TRY(write_all(fd->get(), std::span<const std::uint8_t>(big_endian<8>(plan_size)), out));
    TAKOSUMI_TRY(copy_bytes(plan->fd.get(), fd->get(), plan_size, plan_file, out));
    if (values.size() > UINT32_MAX)
      return std::unexpected(malformed(out, std::to_string(values.size()) + " sensitive values"));
    TAKOSUMI_TRY(write_all(fd->get(), std::span<const std::uint8_t>(big_endian<4>(values.size())), out));
    for (const auto& value : values) {
      if (value.size() > UINT32_MAX)
        return std::unexpected(malformed(out, "a sensitive value over 4 GiB"));
      TAKOSUMI_TRY(write_all(fd->get(), std::span<const std::uint8_t>(big_endian<4>(value.size())), out));
      TAKOSUMI_TRY(write_all(fd->get(), value.span(), out));
    }
    return close_checked(std::move(*fd), out);
  }();
  if (!written) (void)::unlink(out.c_str());
  return written;
}

Result<std::optional<std::vector<SecretBytes>>> split_plan_contents(const fs::path& contents,
                                                                    const fs::path& plan_out) {
  struct Cleanup {
    const fs::path& path;
    ~Cleanup() { (void)::unlink(path.c_str()); }
  } cleanup{contents};
  auto in = open_regular_file(contents);
  if (!in) return std::unexpected(in.error());
  const auto total = static_cast<std::uint64_t>(in->st.st_size);
  std::array<std::uint8_t, 16> head{};
  auto n = read_full(in->fd.get(), head, contents);
  if (!n) return std::unexpected(n.error());
  if (*n <= kMagic.size() || std::memcmp(head.data(), kMagic.data(), kMagic.size()) != 0) {
    // A bare plan file, sealed by an agent before plan contents existed.
    if (::rename(contents.c_str(), plan_out.c_str()) != 0)
      return std::unexpected(errno_error("rename", contents, errno));
    return std::optional<std::vector<SecretBytes>>{};
  }
  if (*n < head.size() || total < head.size())
    return std::unexpected(malformed(contents, "truncated"));
  const bool current = head[kMagic.size()] == static_cast<std::uint8_t>(kPlanSecretsRevision);
  const std::uint64_t plan_size = read_big_endian(std::span(head).subspan(8));
  if (plan_size > total - head.size())
    return std::unexpected(malformed(contents, "the plan is larger than the file"));
  auto out = create_new(plan_out);
  if (!out) return std::unexpected(out.error());
  TAKOSUMI_TRY(copy_bytes(in->fd.get(), out->get(), plan_size, contents, plan_out));
  TAKOSUMI_TRY(close_checked(std::move(*out), plan_out));
  // Every count and size is checked against the bytes the file still holds before anything is
  // allocated for it.
  std::uint64_t left = total - head.size() - plan_size;
  std::array<std::uint8_t, 4> word{};
  const auto next_word = [&]() -> Result<std::uint32_t> {
    if (left < word.size()) return std::unexpected(malformed(contents, "truncated"));
    TAKOSUMI_TRY(read_exact(in->fd.get(), word, contents));
    left -= word.size();
    return static_cast<std::uint32_t>(read_big_endian(word));
  };
  auto count = next_word();
  if (!count) return std::unexpected(count.error());
  if (*count > left / word.size())
    return std::unexpected(malformed(contents, std::to_string(*count) + " sensitive values"));
  std::vector<SecretBytes> values;
  values.reserve(*count);
  for (std::uint32_t i = 0; i < *count; ++i) {
    auto size = next_word();
    if (!size) return std::unexpected(size.error());
    if (*size > left) return std::unexpected(malformed(contents, "truncated"));
    left -= *size;
    SecretBytes value(*size);
    TAKOSUMI_TRY(read_exact(in->fd.get(), value.mutable_span(), contents));
    values.push_back(std::move(value));
  }
  if (left != 0) return std::unexpected(malformed(contents, "bytes after the sensitive values"));
  if (!current) return std::optional<std::vector<SecretBytes>>{};  // found by older code: ask tofu
  return std::optional<std::vector<SecretBytes>>(std::move(values));
}

}  // namespace takosumi::runner
