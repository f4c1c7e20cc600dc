#include "runner/policy/package_hash.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <system_error>
#include <vector>

#include "common/encoding.hpp"
#include "common/file_io.hpp"
#include "crypto/sha256.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;

std::unexpected<Error> refused(const fs::path& package, const std::string& why) {
  return fail(errc::kProviderChecksumMismatch,
              "provider package " + shown_name(package.string()) + " " + why +
                  ": a package holds regular files and directories only; take it again from "
                  "`tofu providers mirror` on the connected side");
}

// A provider package holds a handful of files (a binary, a license, a readme); past this many
// entries the mirror is refused rather than walked and hashed at every Run.
constexpr std::size_t kMaxPackageEntries = 10000;

// Every regular file under dir, as paths relative to it with forward slashes. Entries are read
// with lstat semantics: a symlink is refused, never followed.
Result<std::vector<std::string>> package_files(const fs::path& dir) {
  std::error_code ec;
  const auto status = fs::symlink_status(dir, ec);
  if (ec) return std::unexpected(errno_error("stat", dir, ec.value()));
  if (!fs::is_directory(status)) return refused(dir, "is not a directory");
  std::vector<std::string> files;
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec);
  if (ec) return std::unexpected(errno_error("read", dir, ec.value()));
  std::size_t entries = 0;
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return std::unexpected(errno_error("read", dir, ec.value()));
    if (++entries > kMaxPackageEntries)
      return refused(dir, "holds more than " + std::to_string(kMaxPackageEntries) + " entries");
    const auto entry_status = it->symlink_status(ec);
    if (ec) return std::unexpected(errno_error("stat", it->path(), ec.value()));
    if (fs::is_directory(entry_status)) continue;
    const std::string rel = it->path().lexically_relative(dir).generic_string();
    if (!fs::is_regular_file(entry_status))
      return refused(dir, "holds " + shown_name(rel) + ", not a regular file");
    if (rel.find('\n') != std::string::npos) return refused(dir, "holds a file name with a newline");
    files.push_back(rel);
  }
  if (ec) return std::unexpected(errno_error("read", dir, ec.value()));
  std::sort(files.begin(), files.end());  // byte order, as Go's sort.Strings
  return files;
}

}  // namespace

std::string shown_name(std::string_view name) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(name.size());
  for (const char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += ch;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

Result<std::string> package_hash_h1(const fs::path& package_dir) {
  auto files = package_files(package_dir);
  if (!files) return std::unexpected(files.error());
  crypto::Sha256 summary;
  for (const auto& rel : *files) {
    auto digest = crypto::sha256_file_hex(package_dir / rel);
    if (!digest) return std::unexpected(digest.error());
    summary.update(*digest + "  " + rel + "\n");
  }
  const auto digest = summary.final_digest();
  return "h1:" + base64_encode(std::span<const std::uint8_t>(digest));
}

Result<std::string> package_hash_zh(const fs::path& package_zip) {
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(package_zip, ec)))
    return refused(package_zip, "is not a regular file");
  auto digest = crypto::sha256_file_hex(package_zip);
  if (!digest) return std::unexpected(digest.error());
  return "zh:" + *digest;
}

namespace {

void add_identity(std::string& out, const std::string& rel, const struct stat& st) {
  out += rel + " " + std::to_string(st.st_dev) + " " + std::to_string(st.st_ino) + " " +
         std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + " " + std::to_string(st.st_ctim.tv_sec) + "." +
         std::to_string(st.st_ctim.tv_nsec) + "\n";
}

// The identity of every file of the package (lstat: a link has its own, and is refused when
// hashed); nullopt when something cannot be read (then nothing is cached).
std::optional<std::string> package_identity(const fs::path& package, bool packed) {
  std::string identity;
  struct stat st {};
  if (::lstat(package.c_str(), &st) != 0) return std::nullopt;
  add_identity(identity, ".", st);
  if (packed) return identity;
  std::error_code ec;
  std::size_t entries = 0;
  for (fs::recursive_directory_iterator it(package, ec), end; !ec && it != end; it.increment(ec)) {
    if (++entries > kMaxPackageEntries) return std::nullopt;  // package_files refuses it
    if (::lstat(it->path().c_str(), &st) != 0) return std::nullopt;
    add_identity(identity, it->path().lexically_relative(package).generic_string(), st);
  }
  if (ec) return std::nullopt;
  return identity;
}

}  // namespace

Result<std::string> package_hash(const fs::path& package, bool packed) {
  return packed ? package_hash_zh(package) : package_hash_h1(package);
}

Result<std::string> PackageHashCache::hash(const fs::path& package, bool packed) {
  const auto before = package_identity(package, packed);
  if (before) {
    std::lock_guard lock(mutex_);
    if (auto it = hashes_.find(package); it != hashes_.end() && it->second.first == *before)
      return it->second.second;
  }
  auto hashed = package_hash(package, packed);
  if (!hashed) return hashed;
  // Kept only when nothing changed while it was read.
  if (before && package_identity(package, packed) == before) {
    std::lock_guard lock(mutex_);
    hashes_[package] = {*before, *hashed};
  }
  return hashed;
}

}  // namespace takosumi::runner
