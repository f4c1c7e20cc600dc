#include "protocol/bundle_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <set>

#include <boost/json/value.hpp>

#include "common/encoding.hpp"
#include "common/error_codes.hpp"
#include "common/fd_io.hpp"
#include "common/file_io.hpp"
#include "crypto/sha256.hpp"

namespace takosumi::protocol {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

constexpr std::string_view kMagic = "takosumi-bundle 1\n";
constexpr std::size_t kLengthDigits = 16;

Error invalid(std::string message) {
  return Error{std::string(errc::kBundleInvalid), std::move(message)};
}

bool valid_member_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || name.front() == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
  });
}

std::string length_field(std::size_t n) {
  std::array<char, kLengthDigits + 1> buf{};
  std::snprintf(buf.data(), buf.size(), "%016zx", n);
  return std::string(buf.data(), kLengthDigits);
}

// Copies `size` bytes of `in` to `out`, hashing them.
Result<std::string> copy_hashed(int in, int out, std::uint64_t size, const fs::path& what) {
  crypto::Sha256 sha;
  std::vector<std::byte> buffer(1 << 16);
  while (size > 0) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(size, buffer.size()));
    auto got = read_full(in, std::span(buffer.data(), want), what);
    if (!got) return std::unexpected(got.error());
    if (*got < want) return std::unexpected(invalid("the bundle ends early"));
    const std::span chunk(buffer.data(), want);
    sha.update(std::span(reinterpret_cast<const std::uint8_t*>(chunk.data()), chunk.size()));
    TAKOSUMI_TRY(write_all(out, chunk, what));
    size -= want;
  }
  return sha.final_hex();
}

}  // namespace

json::array to_json(const std::vector<BundleMember>& members) {
  json::array out;
  for (const auto& m : members)
    out.push_back(json::object{{"name", m.name}, {"size", m.size}, {"sha256", m.sha256}});
  return out;
}

Result<std::vector<BundleMember>> bundle_members_from_json(const json::value& v,
                                                           const std::vector<std::string>& allowed) {
  const auto* list = v.if_array();
  if (list == nullptr) return std::unexpected(invalid("members: not an array"));
  if (list->size() > allowed.size())
    return std::unexpected(invalid("members: more than the " + std::to_string(allowed.size()) +
                                   " a bundle of this kind holds"));
  std::vector<BundleMember> out;
  std::set<std::string> seen;
  for (const auto& entry : *list) {
    const auto* o = entry.if_object();
    if (o == nullptr || o->size() != 3) return std::unexpected(invalid("members: malformed entry"));
    const auto* name = o->if_contains("name");
    const auto* size = o->if_contains("size");
    const auto* sha = o->if_contains("sha256");
    if (name == nullptr || !name->is_string() || size == nullptr || !size->is_int64() ||
        size->as_int64() < 0 || sha == nullptr || !sha->is_string() ||
        !is_sha256_hex(sha->as_string()))
      return std::unexpected(invalid("members: malformed entry"));
    const std::string n(name->as_string());
    if (!valid_member_name(n) || std::find(allowed.begin(), allowed.end(), n) == allowed.end())
      return std::unexpected(invalid(
          valid_member_name(n) ? "members: \"" + n + "\" is not a member of this kind of bundle"
                               : "members: a member name is malformed"));
    if (!seen.insert(n).second)
      return std::unexpected(invalid("members: \"" + n + "\" is listed twice"));
    out.push_back({n, static_cast<std::uint64_t>(size->as_int64()), std::string(sha->as_string())});
  }
  return out;
}

Result<std::vector<BundleMember>> describe_members(
    const std::vector<std::pair<std::string, fs::path>>& files) {
  std::vector<BundleMember> out;
  for (const auto& [name, path] : files) {
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec) return std::unexpected(errno_error("stat", path, ec.value()));
    auto sha = crypto::sha256_file_hex(path);
    if (!sha) return std::unexpected(sha.error());
    out.push_back({name, size, std::move(*sha)});
  }
  return out;
}

Status write_bundle(const fs::path& out, std::string_view index,
                    const std::vector<std::pair<std::string, fs::path>>& files) {
  if (index.size() > kMaxBundleIndexBytes)
    return fail(errc::kPayloadTooLarge, "the bundle's index is larger than " +
                                            std::to_string(kMaxBundleIndexBytes) + " bytes");
  const fs::path temp = out.string() + ".partial";
  std::error_code ec;
  fs::remove(temp, ec);
  UniqueFd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid()) return std::unexpected(errno_error("create", temp, errno));
  const std::string head = std::string(kMagic) + length_field(index.size()) + "\n";
  auto written = write_all(fd.get(), head, temp);
  if (written) written = write_all(fd.get(), index, temp);
  for (const auto& [name, path] : files) {
    if (!written) break;
    auto in = open_regular_file(path);
    if (!in) {
      written = std::unexpected(in.error());
      break;
    }
    auto copied = copy_hashed(in->fd.get(), fd.get(), static_cast<std::uint64_t>(in->st.st_size),
                              path);
    if (!copied) written = std::unexpected(copied.error());
  }
  if (written && ::fsync(fd.get()) != 0) written = std::unexpected(errno_error("fsync", temp, errno));
  auto closed = close_checked(std::move(fd), temp);
  if (written && !closed) written = closed;
  if (written && ::rename(temp.c_str(), out.c_str()) != 0)
    written = std::unexpected(errno_error("rename", out, errno));
  if (!written) {
    fs::remove(temp, ec);
    return written;
  }
  return fsync_directory(out.parent_path().empty() ? fs::path(".") : out.parent_path());
}

Result<OpenedBundle> open_bundle(const fs::path& path) {
  auto file = open_regular_file(path);
  if (!file) return std::unexpected(file.error());
  const auto size = static_cast<std::uint64_t>(file->st.st_size);
  std::string head(kMagic.size() + kLengthDigits + 1, '\0');
  auto got = read_full(file->fd.get(), std::as_writable_bytes(std::span(head)), path);
  if (!got) return std::unexpected(got.error());
  if (*got != head.size() || std::string_view(head).substr(0, kMagic.size()) != kMagic ||
      head.back() != '\n')
    return std::unexpected(invalid("not a takosumi bundle (it does not start as one)"));
  const std::string_view digits = std::string_view(head).substr(kMagic.size(), kLengthDigits);
  std::uint64_t length = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), length, 16);
  if (ec != std::errc() || end != digits.data() + digits.size() || !is_lower_hex(digits, kLengthDigits))
    return std::unexpected(invalid("the bundle's index length is malformed"));
  if (length > kMaxBundleIndexBytes)
    return std::unexpected(invalid("the bundle's index is larger than " +
                                   std::to_string(kMaxBundleIndexBytes) + " bytes"));
  if (head.size() + length > size)
    return std::unexpected(invalid("the bundle ends inside its index"));
  std::string index(static_cast<std::size_t>(length), '\0');
  got = read_full(file->fd.get(), std::as_writable_bytes(std::span(index)), path);
  if (!got) return std::unexpected(got.error());
  if (*got != index.size())
    return std::unexpected(invalid("the bundle ends inside its index"));
  return OpenedBundle{path, std::move(index), head.size() + length, size};
}

Status extract_members(const OpenedBundle& bundle, const std::vector<BundleMember>& members,
                       const fs::path& dir, std::uint64_t max_bytes) {
  std::uint64_t total = 0;
  for (const auto& m : members) {
    if (m.size > max_bytes - std::min(total, max_bytes))
      return fail(errc::kPayloadTooLarge, "the bundle's members are larger than " +
                                              std::to_string(max_bytes) + " bytes together");
    total += m.size;
  }
  if (bundle.members_offset + total != bundle.file_size)
    return std::unexpected(invalid("the bundle is " + std::to_string(bundle.file_size) +
                                   " bytes, its index says " +
                                   std::to_string(bundle.members_offset + total)));
  TAKOSUMI_TRY(ensure_directory(dir));
  auto file = open_regular_file(bundle.path);
  if (!file) return std::unexpected(file.error());
  if (::lseek(file->fd.get(), static_cast<off_t>(bundle.members_offset), SEEK_SET) < 0)
    return std::unexpected(errno_error("seek", bundle.path, errno));
  for (const auto& m : members) {
    const fs::path to = dir / m.name;
    UniqueFd out(::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!out.valid()) return std::unexpected(errno_error("create", to, errno));
    auto sha = copy_hashed(file->fd.get(), out.get(), m.size, bundle.path);
    if (!sha) return std::unexpected(sha.error());
    TAKOSUMI_TRY(close_checked(std::move(out), to));
    if (*sha != m.sha256)
      return std::unexpected(invalid("the bundle's member " + m.name +
                                     " does not match its digest in the index"));
  }
  return {};
}

}  // namespace takosumi::protocol
