#include "runner/policy/mirror_verify.hpp"

#include <algorithm>
#include <cctype>
#include <system_error>

#include "common/ascii.hpp"
#include "common/file_io.hpp"
#include "common/failure_codes.hpp"
#include "runner/policy/package_hash.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;


// A mirror's directory level holds hosts, namespaces, providers, versions or platforms: tens, not
// tens of thousands. Past this the mirror is refused rather than walked at every Run.
constexpr std::size_t kMaxDirectoryEntries = 10000;

// The entries of dir in name order, each with its own (not followed) status.
Result<std::vector<fs::directory_entry>> entries_of(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::directory_entry> out;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (out.size() >= kMaxDirectoryEntries)
      return fail(errc::kProviderChecksumMismatch,
                  "provider mirror directory " + shown_name(dir.string()) + " holds more than " +
                      std::to_string(kMaxDirectoryEntries) + " entries; a mirror holds packages only");
    out.push_back(*it);
  }
  if (ec) return std::unexpected(errno_error("read", dir, ec.value()));
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.path().filename() < b.path().filename(); });
  return out;
}

bool is_dir(const fs::directory_entry& e) {
  std::error_code ec;
  return fs::is_directory(e.symlink_status(ec));
}

bool is_file(const fs::directory_entry& e) {
  std::error_code ec;
  return fs::is_regular_file(e.symlink_status(ec));
}

// terraform-provider-<type>_<version>_<os>_<arch>.zip → version and platform.
bool parse_packed_name(const std::string& name, const std::string& type, std::string& version,
                       std::string& platform) {
  const std::string prefix = "terraform-provider-" + type + "_";
  if (!name.starts_with(prefix) || !name.ends_with(".zip")) return false;
  const std::string rest = name.substr(prefix.size(), name.size() - prefix.size() - 4);
  const auto first = rest.find('_');
  if (first == std::string::npos || first == 0) return false;
  version = rest.substr(0, first);
  platform = rest.substr(first + 1);
  return platform.find('_') != std::string::npos;
}

// One provider's directory: <host>/<namespace>/<type>.
Status list_provider(const fs::path& dir, const std::string& address, const std::string& type,
                     MirrorListing& out) {
  auto entries = entries_of(dir);
  if (!entries) return std::unexpected(entries.error());
  for (const auto& e : *entries) {
    const std::string name = e.path().filename().string();
    std::string version, platform;
    if (is_file(e) && parse_packed_name(name, type, version, platform)) {
      out.packages.push_back({address, version, platform, e.path(), true});
    } else if (is_file(e) && name.ends_with(".json")) {
      continue;  // `tofu providers mirror`'s index: tofu's filesystem mirror does not read it
    } else if (is_dir(e)) {
      auto platforms = entries_of(e.path());
      if (!platforms) return std::unexpected(platforms.error());
      for (const auto& p : *platforms) {
        if (!is_dir(p)) {
          out.problems.push_back(shown_name(p.path().string()) + " is not a package directory");
          continue;
        }
        out.packages.push_back({address, name, p.path().filename().string(), p.path(), false});
      }
    } else {
      out.problems.push_back(shown_name(e.path().string()) +
                             " is neither a package nor a mirror index");
    }
  }
  return {};
}

}  // namespace

Result<MirrorListing> list_mirror(const fs::path& mirror) {
  MirrorListing out;
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(mirror, ec)))
    return fail(errc::kProviderChecksumMismatch,
                "provider mirror " + shown_name(mirror.string()) + " is not a directory");
  // The subdirectories of dir; anything else there is a problem, named as not a `what`.
  auto subdirectories = [&out](const fs::path& dir,
                               const char* what) -> Result<std::vector<fs::path>> {
    auto entries = entries_of(dir);
    if (!entries) return std::unexpected(entries.error());
    std::vector<fs::path> dirs;
    for (const auto& e : *entries) {
      if (is_dir(e))
        dirs.push_back(e.path());
      else
        out.problems.push_back(shown_name(e.path().string()) + " is not a " + what + " directory");
    }
    return dirs;
  };
  // host / namespace / type: three levels of directories before the packages.
  auto hosts = subdirectories(mirror, "registry host");
  if (!hosts) return std::unexpected(hosts.error());
  for (const auto& host : *hosts) {
    auto namespaces = subdirectories(host, "namespace");
    if (!namespaces) return std::unexpected(namespaces.error());
    for (const auto& ns : *namespaces) {
      auto types = subdirectories(ns, "provider");
      if (!types) return std::unexpected(types.error());
      for (const auto& type : *types) {
        const std::string type_name = type.filename().string();
        const std::string address = ascii_lower(host.filename().string() + "/" +
                                          ns.filename().string() + "/" + type_name);
        TAKOSUMI_TRY(list_provider(type, address, type_name, out));
      }
    }
  }
  return out;
}

Result<std::size_t> verify_mirror(const fs::path& mirror, const std::vector<ProviderPin>& pins,
                                  PackageHashCache* cache) {
  auto listing = list_mirror(mirror);
  if (!listing) return std::unexpected(listing.error());
  std::vector<std::string> problems = std::move(listing->problems);
  for (const auto& package : listing->packages) {
    const std::string what =
        shown_name(package.address + " " + package.version + " " + package.platform);
    const ProviderPin* pin = find_pin(pins, package.address, package.version);
    if (!pin) {
      problems.push_back(what + " is not pinned (unknown package)");
      continue;
    }
    auto hash = cache ? cache->hash(package.path, package.packed)
                      : package_hash(package.path, package.packed);
    if (!hash) {
      problems.push_back(what + ": " + hash.error().message);
      continue;
    }
    if (std::find(pin->hashes.begin(), pin->hashes.end(), *hash) == pin->hashes.end())
      problems.push_back(what + " has hash " + *hash + ", which its pin does not list (altered)");
  }
  if (problems.empty()) return listing->packages.size();
  std::string message = "provider mirror " + shown_name(mirror.string()) + " does not match its pins: ";
  for (std::size_t i = 0; i < problems.size() && i < 20; ++i)
    message += (i ? "; " : "") + problems[i];
  if (problems.size() > 20) message += "; and " + std::to_string(problems.size() - 20) + " more";
  return fail(errc::kProviderChecksumMismatch, std::move(message));
}

}  // namespace takosumi::runner
