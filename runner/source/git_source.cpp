#include "runner/source/git_source.hpp"

#include <fcntl.h>
#include <git2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <memory>
#include <optional>
#include <vector>

#include "common/ascii.hpp"
#include "common/error_codes.hpp"
#include "common/fd_io.hpp"
#include "common/file_io.hpp"
#include "common/offload.hpp"
#include "crypto/sha256.hpp"
#include "git/git_handles.hpp"
#include "git/libgit2_error.hpp"
#include "common/failure_codes.hpp"
#include "protocol/source_url.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;
using git::Blob;
using git::Commit;
using git::Tree;
using git::libgit2_error;

bool safe_entry_name(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos)
    return false;
  return ascii_lower(name) != ".git";
}

// A symlink stays inside the checkout when its target is relative and, resolved lexically from
// the link's directory, never climbs above the root.
bool safe_link_target(std::string_view dir_in_tree, std::string_view target) {
  if (target.empty() || target.front() == '/') return false;
  const auto resolved = (fs::path(dir_in_tree) / fs::path(target)).lexically_normal();
  return resolved.empty() || *resolved.begin() != "..";
}

struct TreeWriter {
  git_repository* repo;
  git_odb* odb;  // the repository's, for object sizes
  fs::path dest;
  std::uint64_t max_bytes = 0;  // 0: no limit
  std::uint64_t max_entries = 0;
  std::optional<Error> error;
  std::uint64_t bytes = 0;
  std::uint64_t entries = 0;

  Status count_entry() {
    if (max_entries > 0 && ++entries > max_entries)
      return fail(errc::kLimitExceeded, "the commit's tree has more than " + std::to_string(max_entries) +
                                            " entries");
    return {};
  }

  // Before an object is read: its size from the object database's header.
  Status admit(const git_tree_entry* entry, const fs::path& path) {
    TAKOSUMI_TRY(count_entry());
    size_t size = 0;
    git_object_t type = GIT_OBJECT_INVALID;
    if (git_odb_read_header(&size, &type, odb, git_tree_entry_id(entry)) != 0)
      return std::unexpected(libgit2_error(errc::kSourceFetchFailed, "read " + path.string()));
    if (size > kMaxCheckoutFileBytes)
      return fail(errc::kLimitExceeded, path.lexically_relative(dest).string() + " is " +
                                            std::to_string(size >> 20) + " MiB: a checkout takes no file "
                                            "past " + std::to_string(kMaxCheckoutFileBytes >> 20) + " MiB");
    bytes += size;
    if (max_bytes > 0 && bytes > max_bytes)
      return fail(errc::kLimitExceeded, "the commit's files take more than the workspace's limit "
                                        "(limits.workspaceMiB: " + std::to_string(max_bytes >> 20) + " MiB)");
    return {};
  }

  Status write_blob(const git_tree_entry* entry, const fs::path& path, unsigned mode) {
    TAKOSUMI_TRY(admit(entry, path));
    git_blob* raw = nullptr;
    if (git_blob_lookup(&raw, repo, git_tree_entry_id(entry)) != 0)
      return std::unexpected(libgit2_error(errc::kSourceFetchFailed, "read " + path.string()));
    Blob blob(raw);
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode));
    if (!fd.valid()) return std::unexpected(errno_error("create", path, errno));
    const std::span content(static_cast<const std::byte*>(git_blob_rawcontent(blob.get())),
                            static_cast<std::size_t>(git_blob_rawsize(blob.get())));
    auto written = write_all(fd.get(), content, path);
    auto closed = close_checked(std::move(fd), path);
    return written ? closed : written;
  }

  Status write_link(const git_tree_entry* entry, std::string_view root, const fs::path& path) {
    TAKOSUMI_TRY(admit(entry, path));
    git_blob* raw = nullptr;
    if (git_blob_lookup(&raw, repo, git_tree_entry_id(entry)) != 0)
      return std::unexpected(libgit2_error(errc::kSourceFetchFailed, "read " + path.string()));
    Blob blob(raw);
    const std::string target(static_cast<const char*>(git_blob_rawcontent(blob.get())),
                             static_cast<std::size_t>(git_blob_rawsize(blob.get())));
    if (!safe_link_target(root, target))
      return fail(errc::kSourceFetchFailed,
                  "symlink " + std::string(root) + git_tree_entry_name(entry) +
                      " points outside the checkout");
    if (::symlink(target.c_str(), path.c_str()) != 0)
      return std::unexpected(errno_error("symlink", path, errno));
    return {};
  }

  Status write_entry(const char* root, const git_tree_entry* entry) {
    const std::string_view name = git_tree_entry_name(entry);
    if (!safe_entry_name(name))
      return fail(errc::kSourceFetchFailed, "unsafe tree entry \"" + std::string(root) +
                                                std::string(name) + "\"");
    const fs::path path = dest / root / name;
    switch (git_tree_entry_filemode(entry)) {
      case GIT_FILEMODE_TREE:
        TAKOSUMI_TRY(count_entry());
        if (::mkdir(path.c_str(), 0755) != 0) return std::unexpected(errno_error("mkdir", path, errno));
        return {};
      case GIT_FILEMODE_BLOB:
        return write_blob(entry, path, 0644);
      case GIT_FILEMODE_BLOB_EXECUTABLE:
        return write_blob(entry, path, 0755);
      case GIT_FILEMODE_LINK:
        return write_link(entry, root, path);
      default:  // submodules are not part of a Capsule's source
        return {};
    }
  }

  static int visit(const char* root, const git_tree_entry* entry, void* payload) {
    auto* self = static_cast<TreeWriter*>(payload);
    auto r = self->write_entry(root, entry);
    if (r) return 0;
    self->error = r.error();
    return -1;
  }
};

Status write_tree(git_repository* repo, git_commit* commit, const fs::path& dest,
                  const SourceAccess& access) {
  git_tree* raw = nullptr;
  if (git_commit_tree(&raw, commit) != 0)
    return std::unexpected(libgit2_error(errc::kSourceFetchFailed, "read commit tree"));
  Tree tree(raw);
  if (::mkdir(dest.c_str(), 0700) != 0) return std::unexpected(errno_error("mkdir", dest, errno));
  git_odb* odb = nullptr;
  if (git_repository_odb(&odb, repo) != 0)
    return std::unexpected(libgit2_error(errc::kSourceFetchFailed, "open object database"));
  git::Odb owner(odb);
  TreeWriter writer{repo, odb, dest, access.max_bytes, access.max_entries, std::nullopt};
  if (git_tree_walk(tree.get(), GIT_TREEWALK_PRE, &TreeWriter::visit, &writer) != 0) {
    if (writer.error) return std::unexpected(*writer.error);
    return std::unexpected(libgit2_error(errc::kSourceFetchFailed, "walk tree"));
  }
  return {};
}

Status check_tree(git_commit* commit, const protocol::SourceSpec& source) {
  if (source.tree.empty()) return {};
  char hex[GIT_OID_HEXSZ + 1] = {};
  git_oid_tostr(hex, sizeof hex, git_commit_tree_id(commit));
  if (source.tree == hex) return {};
  return fail(errc::kSourceTreeMismatch, "commit " + source.commit + " has tree " + hex +
                                             ", the manifest names tree " + source.tree);
}


// The commit an offline bundle brought: in the cache once its pack is indexed, no fetch, no ref;
// the pack must have the manifest's digest first.
Result<Commit> commit_from_pack(git::SourceCache& cache, const protocol::SourceSpec& source,
                                const fs::path& pack) {
  auto digest = crypto::sha256_file_hex(pack);
  if (!digest) return std::unexpected(digest.error());
  if (*digest != source.pack_sha256)
    return fail(errc::kSourceTreeMismatch, "the source pack has sha256 " + *digest +
                                               ", the manifest names " + source.pack_sha256);
  return cache.commit_from_pack(source.commit, pack);
}


Result<Commit> locate_commit(git::SourceCache& cache, const SourceRequest& request,
                             const git::FetchSettings& fetch) {
  const auto& source = request.source;
  auto commit = request.pack ? commit_from_pack(cache, source, *request.pack)
                             : cache.fetch_commit(source.commit, request.credential, fetch);
  if (!commit) return commit;
  TAKOSUMI_TRY(check_tree(commit->get(), source));
  return commit;
}

Result<CheckedOutSource> checkout_locked(git::SourceCache& cache, const SourceRequest& request,
                                         const fs::path& dest, const fs::path& module,
                                         const SourceAccess& access) {
  git::FetchSettings fetch = access.fetch;
  fetch.allow_internal_hosts = access.rules.allow_internal_hosts;
  auto commit = locate_commit(cache, request, fetch);
  if (!commit) return std::unexpected(commit.error());
  TAKOSUMI_TRY(write_tree(cache.repository(), commit->get(), dest, access));
  const auto& source = request.source;
  CheckedOutSource out{dest, (dest / module).lexically_normal(), source.commit};
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(out.module_dir, ec)))
    return fail(errc::kManifestInvalid, "modulePath \"" + source.module_path +
                                            "\" is not a directory in commit " + source.commit);
  return out;
}

Status check_ids(const protocol::SourceSpec& source) {
  if (!git::is_object_id(source.commit)) return fail(errc::kManifestInvalid, "not a 40-hex commit id");
  if (!source.tree.empty() && !git::is_object_id(source.tree))
    return fail(errc::kManifestInvalid, "tree \"" + source.tree + "\" is not a 40-hex tree id");
  return {};
}

}  // namespace

Result<std::filesystem::path> safe_module_path(std::string_view module_path) {
  const fs::path p(module_path);
  if (p.is_absolute())
    return fail(errc::kManifestInvalid, "modulePath \"" + std::string(module_path) + "\" is absolute");
  for (const auto& part : p)
    if (part == "..")
      return fail(errc::kManifestInvalid,
                  "modulePath \"" + std::string(module_path) + "\" leaves the repository");
  return p.lexically_normal();
}

Result<CheckedOutSource> checkout_source(const SourceAccess& access, const SourceRequest& request,
                                         const std::filesystem::path& dest) {
  const auto& source = request.source;
  const std::string context =
      "checkout " + protocol::display_source_url(source.url) + " at " + source.commit;
  if (request.pack.has_value() == source.pack_sha256.empty())
    return fail(errc::kManifestInvalid,
                context + (request.pack ? ": a source pack was given but the manifest names none"
                                        : ": the manifest names a source pack that was not provided"));
  // This agent's own rules, whatever the control plane signed: an offline bundle's pack is
  // fetched from nowhere, so only its URL's form matters there.
  if (auto url = request.pack ? protocol::parse_source_url(source.url)
                              : protocol::check_source_url(source.url, access.rules);
      !url)
    return std::unexpected(url.error().with_context(context));
  auto module = safe_module_path(source.module_path);
  if (!module) return std::unexpected(module.error().with_context(context));
  if (auto ids = check_ids(source); !ids) return std::unexpected(ids.error().with_context(context));
  auto cache = git::SourceCache::open(access.git_cache, request.workspace_id, source.url);
  if (!cache) return std::unexpected(cache.error().with_context(context));
  return with_context(checkout_locked(*cache, request, dest, *module, access), context);
}

boost::asio::awaitable<Result<CheckedOutSource>> async_checkout_source(
    boost::asio::thread_pool& pool, const SourceAccess& access, SourceRequest request,
    std::filesystem::path dest) {
  co_return co_await async_offload(pool.get_executor(),
                                   [&] { return checkout_source(access, request, dest); });
}

}  // namespace takosumi::runner
