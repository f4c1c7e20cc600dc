#include "runner/policy/verified_mirror.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "common/error_codes.hpp"
#include "common/fd_io.hpp"
#include "common/file_io.hpp"
#include "crypto/random_ids.hpp"
#include "crypto/sha256.hpp"
#include "common/failure_codes.hpp"
#include "runner/policy/mirror_verify.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;

constexpr int kKeptGenerations = 2;  // besides the one in use
// A generation a Run may still be using is never removed: Runs end within tofu.timeoutSeconds
// (30 minutes by default); a day is far past that.
constexpr auto kGenerationInUse = std::chrono::hours(24);
// What the checked packages held (package_hash refuses more entries than this in one package).
constexpr std::size_t kMaxCopiedEntries = 10000;

Error changed(const fs::path& what) {
  return Error{std::string(errc::kProviderChecksumMismatch),
               "provider package " + shown_name(what.string()) +
                   " changed while it was copied from the mirror"};
}

// Copies one regular file, never through a symlink and never blocking on a FIFO put in its place,
// and no more than the size it had when opened (a file that grows meanwhile no longer matches
// its pin, and cannot fill the state directory); only the owner's execute bit is kept.
// shared: readable by every user (a mirror the agent's user reads), else the owner's only.
Status copy_file_plain(const fs::path& from, const fs::path& to, bool shared = false) {
  UniqueFd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!in.valid()) return std::unexpected(errno == ELOOP ? changed(from) : errno_error("open", from, errno));
  struct stat st {};
  if (::fstat(in.get(), &st) != 0) return std::unexpected(errno_error("stat", from, errno));
  if (!S_ISREG(st.st_mode)) return std::unexpected(changed(from));
  const int flags = ::fcntl(in.get(), F_GETFL);
  if (flags < 0 || ::fcntl(in.get(), F_SETFL, flags & ~O_NONBLOCK) != 0)
    return std::unexpected(errno_error("fcntl", from, errno));
  const mode_t mode = ((st.st_mode & S_IXUSR) ? 0500 : 0400) | (shared ? (((st.st_mode & S_IXUSR) ? 0055 : 0044)) : 0);
  UniqueFd out(::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!out.valid()) return std::unexpected(errno_error("create", to, errno));
  std::vector<std::byte> buffer(1 << 16);
  auto left = static_cast<std::uint64_t>(st.st_size);
  while (left > 0) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(left, buffer.size()));
    auto got = read_full(in.get(), std::span(buffer.data(), want), from);
    if (!got) return std::unexpected(got.error());
    TAKOSUMI_TRY(write_all(out.get(), std::span(buffer.data(), *got), to));
    if (*got < want) break;
    left -= *got;
  }
  if (::fchmod(out.get(), mode) != 0) return std::unexpected(errno_error("chmod", to, errno));
  // Durable before the generation is renamed into place: a generation is reused unchecked.
  if (::fsync(out.get()) != 0) return std::unexpected(errno_error("fsync", to, errno));
  return close_checked(std::move(out), to);
}

// A package directory, regular files and directories only (package_hash refuses anything else
// already; something else here means the package changed since).
Status copy_tree(const fs::path& from, const fs::path& to, std::size_t& entries,
                 bool shared = false) {
  if (::mkdir(to.c_str(), 0700) != 0) return std::unexpected(errno_error("mkdir", to, errno));
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(from, ec)) {
    if (++entries > kMaxCopiedEntries) return std::unexpected(changed(from));
    const auto status = entry.symlink_status(ec);
    if (ec) return std::unexpected(errno_error("stat", entry.path(), ec.value()));
    const fs::path target = to / entry.path().filename();
    if (fs::is_directory(status)) {
      TAKOSUMI_TRY(copy_tree(entry.path(), target, entries, shared));
    } else if (fs::is_regular_file(status)) {
      TAKOSUMI_TRY(copy_file_plain(entry.path(), target, shared));
    } else {
      return std::unexpected(changed(entry.path()));
    }
  }
  if (ec) return std::unexpected(errno_error("list", from, ec.value()));
  return {};
}

// Directories read-only once everything is in place (files are already).
void seal_tree(const fs::path& dir, mode_t mode = 0500) {
  std::error_code ec;
  for (const auto& entry : fs::recursive_directory_iterator(dir, ec))
    if (entry.is_directory(ec) && !entry.is_symlink(ec)) ::chmod(entry.path().c_str(), mode);
  ::chmod(dir.c_str(), mode);
}

// A tree the agent made read-only, removed.
void remove_sealed(const fs::path& dir) {
  std::error_code ec;
  ::chmod(dir.c_str(), 0700);
  for (const auto& entry : fs::recursive_directory_iterator(dir, ec))
    if (entry.is_directory(ec) && !entry.is_symlink(ec)) ::chmod(entry.path().c_str(), 0700);
  fs::remove_all(dir, ec);
}

// Other generations beyond the kKeptGenerations most recently used, and temporaries more than an
// hour old (a copy a crash interrupted).
void prune(const fs::path& store, const fs::path& current) {
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> generations;
  const auto hour_ago = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (const auto& entry : fs::directory_iterator(store, ec)) {
    if (entry.path() == current) continue;
    const auto when = entry.last_write_time(ec);
    if (ec) continue;
    if (entry.path().extension() == ".partial") {
      if (when < hour_ago) remove_sealed(entry.path());
      continue;
    }
    generations.emplace_back(when, entry.path());
  }
  std::sort(generations.begin(), generations.end(), std::greater<>());
  const auto in_use = fs::file_time_type::clock::now() - kGenerationInUse;
  for (std::size_t i = kKeptGenerations; i < generations.size(); ++i)
    if (generations[i].first < in_use) remove_sealed(generations[i].second);
}

}  // namespace

Result<fs::path> verified_mirror(const fs::path& mirror, const std::vector<ProviderPin>& pins,
                                 const fs::path& store, PackageHashCache* cache) {
  TAKOSUMI_TRY(verify_mirror(mirror, pins, cache));
  auto listing = list_mirror(mirror);
  if (!listing) return std::unexpected(listing.error());
  struct Entry {
    fs::path relative;
    const MirrorPackage* package;
    std::string hash;
  };
  std::vector<Entry> entries;
  std::string lines;
  for (const auto& package : listing->packages) {
    auto hash = cache ? cache->hash(package.path, package.packed)
                      : package_hash(package.path, package.packed);
    if (!hash) return std::unexpected(hash.error());
    entries.push_back({package.path.lexically_relative(mirror), &package, *hash});
    lines += entries.back().relative.generic_string() + " " + *hash + "\n";
  }
  const fs::path generation = store / crypto::sha256_hex(lines).substr(0, 32);
  TAKOSUMI_TRY(ensure_directory(store));
  std::error_code ec;
  if (fs::is_directory(fs::symlink_status(generation, ec))) {
    // In use again: the newest for prune's count.
    ::utimensat(AT_FDCWD, generation.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
    return generation;
  }
  const fs::path partial = generation.string() + "." + crypto::new_token().substr(0, 12) + ".partial";
  auto made = [&]() -> Status {
    TAKOSUMI_TRY(ensure_directory(partial));
    std::size_t copied_entries = 0;
    for (const auto& e : entries) {
      const fs::path to = partial / e.relative;
      TAKOSUMI_TRY(ensure_directory(to.parent_path()));
      if (e.package->packed) TAKOSUMI_TRY(copy_file_plain(e.package->path, to));
      else TAKOSUMI_TRY(copy_tree(e.package->path, to, copied_entries));
      auto copied = package_hash(to, e.package->packed);
      if (!copied) return std::unexpected(copied.error());
      if (*copied != e.hash) return std::unexpected(changed(e.package->path));
    }
    // The copy is what a Run loads, and only the agent can write it now: it is the copy that
    // must match the pins, package for package (a file swapped in the mirror after the check
    // above, or a package added, is caught here).
    auto checked = verify_mirror(partial, pins);
    if (!checked) return std::unexpected(checked.error());
    if (*checked != entries.size()) return std::unexpected(changed(mirror));
    seal_tree(partial);
    return {};
  }();
  if (!made) {
    remove_sealed(partial);
    return std::unexpected(made.error());
  }
  if (::rename(partial.c_str(), generation.c_str()) != 0) {
    // Another Run made the same generation meanwhile: use that one.
    const int err = errno;
    remove_sealed(partial);
    if (!fs::is_directory(fs::symlink_status(generation, ec)))
      return std::unexpected(errno_error("rename", generation, err));
  }
  (void)fsync_directory(store);
  prune(store, generation);
  return generation;
}

Result<MirrorAddition> add_to_mirror(const fs::path& from, const fs::path& mirror,
                                     const std::vector<ProviderPin>& pins) {
  TAKOSUMI_TRY(verify_mirror(from, pins));
  auto listing = list_mirror(from);
  if (!listing) return std::unexpected(listing.error());
  MirrorAddition added;
  for (const auto& package : listing->packages) {
    const fs::path relative = package.path.lexically_relative(from);
    const fs::path target = mirror / relative;
    const std::string what = shown_name(package.address + " " + package.version + " " + package.platform);
    auto wanted = package_hash(package.path, package.packed);
    if (!wanted) return std::unexpected(wanted.error());
    std::error_code ec;
    if (fs::exists(fs::symlink_status(target, ec))) {
      auto present = package_hash(target, package.packed);
      if (present && *present == *wanted) {
        added.present.push_back(what);
        continue;
      }
      return fail(errc::kConflict, "the mirror holds another " + what + " at " +
                                       shown_name(target.string()) +
                                       "; remove it first if it is to be replaced");
    }
    TAKOSUMI_TRY(ensure_directory(target.parent_path(), 0755));
    const fs::path partial = target.string() + "." + crypto::new_token().substr(0, 12) + ".partial";
    std::size_t entries = 0;
    auto copied = package.packed ? copy_file_plain(package.path, partial, true)
                                 : copy_tree(package.path, partial, entries, true);
    if (copied) {
      auto hash = package_hash(partial, package.packed);
      if (!hash) copied = std::unexpected(hash.error());
      else if (*hash != *wanted) copied = std::unexpected(changed(package.path));
    }
    if (copied && !package.packed) seal_tree(partial, 0755);
    if (copied && ::rename(partial.c_str(), target.c_str()) != 0)
      copied = std::unexpected(errno_error("rename", target, errno));
    if (!copied) {
      remove_sealed(partial);
      return std::unexpected(copied.error());
    }
    added.added.push_back(what);
  }
  // What the mirror holds now, all of it, against the pins: what an agent will check.
  TAKOSUMI_TRY(verify_mirror(mirror, pins));
  return added;
}

Result<RunProviders> run_providers(const std::filesystem::path& mirror,
                                   const std::filesystem::path& pins_file,
                                   const std::filesystem::path& store, PackageHashCache* cache) {
  if (pins_file.empty()) return RunProviders{mirror, {}};
  auto pins = read_provider_pins(pins_file);
  if (!pins) return fail(errc::kProviderChecksumMismatch, "tofu.providerPins: " + pins.error().message);
  if (store.empty()) {
    auto checked = verify_mirror(mirror, *pins, cache);
    if (!checked) return std::unexpected(checked.error());
    return RunProviders{mirror, std::move(*pins)};
  }
  auto copy = verified_mirror(mirror, *pins, store, cache);
  if (!copy) return std::unexpected(copy.error());
  return RunProviders{std::move(*copy), std::move(*pins)};
}

}  // namespace takosumi::runner
