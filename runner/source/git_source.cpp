#include "runner/source/git_source.hpp"

#include <fcntl.h>
#include <git2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <memory>
#include <optional>
#include <vector>

#include "common/encoding.hpp"
#include "common/error_codes.hpp"
#include "common/fd_io.hpp"
#include "common/file_io.hpp"
#include "common/file_lock.hpp"
#include "crypto/sha256.hpp"
#include "common/offload.hpp"
#include "protocol/failure_codes.hpp"
#include "runner/source/libgit2_error.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;

template <class T, void (*Free)(T*)>
struct GitDeleter {
  void operator()(T* p) const { Free(p); }
};
using Repository = std::unique_ptr<git_repository, GitDeleter<git_repository, git_repository_free>>;
using Remote = std::unique_ptr<git_remote, GitDeleter<git_remote, git_remote_free>>;
using Commit = std::unique_ptr<git_commit, GitDeleter<git_commit, git_commit_free>>;
using Tree = std::unique_ptr<git_tree, GitDeleter<git_tree, git_tree_free>>;
using Blob = std::unique_ptr<git_blob, GitDeleter<git_blob, git_blob_free>>;

bool is_commit_id(std::string_view s) {
  return is_lower_hex(s, GIT_OID_HEXSZ);
}

Result<Repository> open_or_init_cache(const fs::path& path) {
  git_repository* repo = nullptr;
  if (fs::exists(path) && git_repository_open_bare(&repo, path.c_str()) == 0) return Repository(repo);
  // Missing or unreadable: start over (it is only a cache).
  TAKOSUMI_TRY(remove_tree(path));
  if (git_repository_init(&repo, path.c_str(), /*is_bare=*/1) != 0)
    return std::unexpected(libgit2_error(errc::kSourceFetchFailed, "init cache " + path.string()));
  return Repository(repo);
}

Status fetch_all(git_repository* repo, const std::string& url) {
  // An anonymous remote with the URL exactly as the manifest names it. Skipping
  // `url.<base>.insteadOf` also keeps the agent flat: Debian 12's libgit2 1.5.1 compiles a PCRE2
  // regex to look those up on every remote creation and never frees it (about 87 KiB per Run;
  // `git_remote_create_anonymous` always looks them up).
  git_remote_create_options create;
  git_remote_create_options_init(&create, GIT_REMOTE_CREATE_OPTIONS_VERSION);
  create.repository = repo;
  create.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF;
  git_remote* raw = nullptr;
  if (git_remote_create_with_opts(&raw, url.c_str(), &create) != 0)
    return std::unexpected(libgit2_error(errc::kSourceFetchFailed, "fetch: remote"));
  Remote remote(raw);
  char heads[] = "+refs/heads/*:refs/heads/*";
  char tags[] = "+refs/tags/*:refs/tags/*";
  char* specs[] = {heads, tags};
  const git_strarray refspecs{specs, 2};
  git_fetch_options opts;
  git_fetch_options_init(&opts, GIT_FETCH_OPTIONS_VERSION);
  opts.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;  // the refspecs already name every tag
  // Refs deleted upstream disappear here too, so reachability below reflects the remote today.
  opts.prune = GIT_FETCH_PRUNE;
  if (git_remote_fetch(remote.get(), &refspecs, &opts, "takosumi fetch") != 0)
    return std::unexpected(libgit2_error(errc::kSourceFetchFailed, "fetch"));
  return {};
}

// Tips of every branch and tag in the cache, peeled to commits.
std::vector<git_oid> ref_tips(git_repository* repo) {
  std::vector<git_oid> tips;
  git_reference_iterator* it = nullptr;
  if (git_reference_iterator_new(&it, repo) != 0) return tips;
  git_reference* ref = nullptr;
  while (git_reference_next(&ref, it) == 0) {
    git_object* target = nullptr;
    if (git_reference_peel(&target, ref, GIT_OBJECT_COMMIT) == 0) {
      tips.push_back(*git_object_id(target));
      git_object_free(target);
    }
    git_reference_free(ref);
  }
  git_reference_iterator_free(it);
  return tips;
}

bool reachable_from_a_ref(git_repository* repo, const git_oid& commit) {
  auto tips = ref_tips(repo);
  for (const auto& tip : tips)
    if (git_oid_equal(&tip, &commit)) return true;
  return !tips.empty() &&
         git_graph_reachable_from_any(repo, &commit, tips.data(), tips.size()) == 1;
}

// The commit as the repository has it now. The cache is always refreshed first: a commit the
// cache still holds but no branch or tag of the repository reaches any more (history rewritten,
// branch deleted and collected) is missing, which is what a rollback must find out.
Result<Commit> find_commit(git_repository* repo, const protocol::SourceSpec& source) {
  git_oid oid;
  if (git_oid_fromstr(&oid, source.commit.c_str()) != 0)
    return fail(errc::kManifestInvalid, "commit \"" + source.commit + "\" is not a commit id");
  TAKOSUMI_TRY(fetch_all(repo, source.url));
  git_commit* raw = nullptr;
  const int rc = git_commit_lookup(&raw, repo, &oid);
  const auto missing = [&] {
    return fail(errc::kSourceCommitMissing,
                "commit " + source.commit + " does not exist in " + redact_url(source.url) +
                    " (no branch or tag reaches it; was history rewritten?)");
  };
  if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC) return missing();
  if (rc != 0) return std::unexpected(libgit2_error(errc::kSourceFetchFailed, "lookup commit"));
  Commit commit(raw);
  if (!reachable_from_a_ref(repo, oid)) return missing();
  return commit;
}

bool safe_entry_name(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos)
    return false;
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower != ".git";
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
  fs::path dest;
  std::optional<Error> error;

  Status write_blob(const git_tree_entry* entry, const fs::path& path, unsigned mode) {
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

Status write_tree(git_repository* repo, git_commit* commit, const fs::path& dest) {
  git_tree* raw = nullptr;
  if (git_commit_tree(&raw, commit) != 0)
    return std::unexpected(libgit2_error(errc::kSourceFetchFailed, "read commit tree"));
  Tree tree(raw);
  if (::mkdir(dest.c_str(), 0700) != 0) return std::unexpected(errno_error("mkdir", dest, errno));
  TreeWriter writer{repo, dest, std::nullopt};
  if (git_tree_walk(tree.get(), GIT_TREEWALK_PRE, &TreeWriter::visit, &writer) != 0) {
    if (writer.error) return std::unexpected(*writer.error);
    return std::unexpected(libgit2_error(errc::kSourceFetchFailed, "walk tree"));
  }
  return {};
}

// Indexes an offline bundle's pack into the cache: libgit2's indexer hashes every object it
// stores, so what lands in the cache is exactly what the object ids say.
Status index_pack(git_repository* repo, const fs::path& pack) {
  git_odb* odb = nullptr;
  if (git_repository_odb(&odb, repo) != 0)
    return std::unexpected(libgit2_error(errc::kSourceFetchFailed, "open object database"));
  std::unique_ptr<git_odb, GitDeleter<git_odb, git_odb_free>> odb_owner(odb);
  git_odb_writepack* writer = nullptr;
  if (git_odb_write_pack(&writer, odb, nullptr, nullptr) != 0)
    return std::unexpected(libgit2_error(errc::kSourceFetchFailed, "index the source pack"));
  struct Free {
    void operator()(git_odb_writepack* w) const { w->free(w); }
  };
  std::unique_ptr<git_odb_writepack, Free> owner(writer);
  UniqueFd fd(::open(pack.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) return std::unexpected(errno_error("open", pack, errno));
  git_indexer_progress progress{};
  std::vector<char> buffer(1 << 16);
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::unexpected(errno_error("read", pack, errno));
    if (n == 0) break;
    if (writer->append(writer, buffer.data(), static_cast<std::size_t>(n), &progress) != 0)
      return std::unexpected(libgit2_error(errc::kSourceTreeMismatch, "the source pack"));
  }
  if (writer->commit(writer, &progress) != 0)
    return std::unexpected(libgit2_error(errc::kSourceTreeMismatch, "the source pack"));
  return {};
}

// The commit an offline bundle brought: in the cache once its pack is indexed, no fetch, no ref.
Result<Commit> commit_from_pack(git_repository* repo, const protocol::SourceSpec& source,
                                const fs::path& pack) {
  auto digest = crypto::sha256_file_hex(pack);
  if (!digest) return std::unexpected(digest.error());
  if (*digest != source.pack_sha256)
    return fail(errc::kSourceTreeMismatch, "the source pack has sha256 " + *digest +
                                               ", the manifest names " + source.pack_sha256);
  TAKOSUMI_TRY(index_pack(repo, pack));
  git_oid oid;
  if (git_oid_fromstr(&oid, source.commit.c_str()) != 0)
    return fail(errc::kManifestInvalid, "commit \"" + source.commit + "\" is not a commit id");
  git_commit* raw = nullptr;
  if (git_commit_lookup(&raw, repo, &oid) != 0)
    return fail(errc::kSourceTreeMismatch,
                "the source pack does not hold commit " + source.commit);
  return Commit(raw);
}

Status check_tree(git_commit* commit, const protocol::SourceSpec& source) {
  if (source.tree.empty()) return {};
  char hex[GIT_OID_HEXSZ + 1] = {};
  git_oid_tostr(hex, sizeof hex, git_commit_tree_id(commit));
  if (source.tree == hex) return {};
  return fail(errc::kSourceTreeMismatch, "commit " + source.commit + " has tree " + hex +
                                             ", the manifest names tree " + source.tree);
}

Result<Commit> locate_commit(git_repository* repo, const protocol::SourceSpec& source,
                             const std::optional<fs::path>& pack) {
  auto commit = pack ? commit_from_pack(repo, source, *pack) : find_commit(repo, source);
  if (!commit) return commit;
  TAKOSUMI_TRY(check_tree(commit->get(), source));
  return commit;
}

Result<CheckedOutSource> checkout_locked(const fs::path& cache, const protocol::SourceSpec& source,
                                         const fs::path& dest, const fs::path& module,
                                         const std::optional<fs::path>& pack) {
  auto repo = open_or_init_cache(cache);
  if (!repo) return std::unexpected(repo.error());
  auto commit = locate_commit(repo->get(), source, pack);
  if (!commit) return std::unexpected(commit.error());
  TAKOSUMI_TRY(write_tree(repo->get(), commit->get(), dest));
  CheckedOutSource out{dest, (dest / module).lexically_normal(), source.commit};
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(out.module_dir, ec)))
    return fail(errc::kManifestInvalid, "modulePath \"" + source.module_path +
                                            "\" is not a directory in commit " + source.commit);
  return out;
}

}  // namespace

std::filesystem::path cache_repository_path(const std::filesystem::path& git_cache,
                                            std::string_view url) {
  return git_cache / (crypto::sha256_hex(url).substr(0, 16) + ".git");
}

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

std::string redact_url(std::string_view url) {
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  const auto host_start = scheme + 3;
  const auto at = url.find('@', host_start);
  const auto slash = url.find('/', host_start);
  if (at == std::string_view::npos || (slash != std::string_view::npos && at > slash))
    return std::string(url);
  return std::string(url.substr(0, host_start)) + "***@" + std::string(url.substr(at + 1));
}

namespace {

// The source's cache repository, open and locked: one checkout or pack per cache at a time, across
// Runs and agents sharing the cache directory.
struct LockedCache {
  fs::path path;
  FileLock lock;
};

Result<LockedCache> lock_cache(const fs::path& git_cache, const protocol::SourceSpec& source) {
  if (!is_commit_id(source.commit))
    return fail(errc::kManifestInvalid, "not a 40-hex commit id");
  if (!source.tree.empty() && !is_commit_id(source.tree))
    return fail(errc::kManifestInvalid, "tree \"" + source.tree + "\" is not a 40-hex tree id");
  ensure_libgit2();
  TAKOSUMI_TRY(ensure_directory(git_cache));
  auto cache = cache_repository_path(git_cache, source.url);
  auto lock = FileLock::acquire(fs::path(cache.string() + ".lock"));
  if (!lock) return fail(errc::kSourceFetchFailed, lock.error().message);
  return LockedCache{std::move(cache), std::move(*lock)};
}

std::string context_of(const protocol::SourceSpec& source) {
  return "checkout " + redact_url(source.url) + " at " + source.commit;
}

}  // namespace

Result<CheckedOutSource> checkout_source(const std::filesystem::path& git_cache,
                                         const protocol::SourceSpec& source,
                                         const std::filesystem::path& dest,
                                         const std::optional<std::filesystem::path>& pack) {
  const std::string context = context_of(source);
  if (pack.has_value() == source.pack_sha256.empty())
    return fail(errc::kManifestInvalid,
                context + (pack ? ": a source pack was given but the manifest names none"
                                : ": the manifest names a source pack that was not provided"));
  auto module = safe_module_path(source.module_path);
  if (!module) return std::unexpected(module.error().with_context(context));
  auto cache = lock_cache(git_cache, source);
  if (!cache) return std::unexpected(cache.error().with_context(context));
  return with_context(checkout_locked(cache->path, source, dest, *module, pack), context);
}

boost::asio::awaitable<Result<CheckedOutSource>> async_checkout_source(
    boost::asio::thread_pool& pool, std::filesystem::path git_cache, protocol::SourceSpec source,
    std::filesystem::path dest, std::optional<std::filesystem::path> pack) {
  co_return co_await async_offload(pool.get_executor(),
                                   [&] { return checkout_source(git_cache, source, dest, pack); });
}

Result<std::string> pack_source(const std::filesystem::path& git_cache,
                                const protocol::SourceSpec& source,
                                const std::filesystem::path& pack_out) {
  const std::string context = "pack " + redact_url(source.url) + " at " + source.commit;
  auto cache = lock_cache(git_cache, source);
  if (!cache) return std::unexpected(cache.error().with_context(context));
  auto repo = open_or_init_cache(cache->path);
  if (!repo) return std::unexpected(repo.error().with_context(context));
  auto commit = find_commit(repo->get(), source);
  if (!commit) return std::unexpected(commit.error().with_context(context));
  git_packbuilder* raw = nullptr;
  if (git_packbuilder_new(&raw, repo->get()) != 0)
    return std::unexpected(libgit2_error(errc::kSourceFetchFailed, context));
  std::unique_ptr<git_packbuilder, GitDeleter<git_packbuilder, git_packbuilder_free>> builder(raw);
  // The commit with its whole tree; its parents stay out (the Run needs this one snapshot).
  if (git_packbuilder_insert_commit(builder.get(), git_commit_id(commit->get())) != 0)
    return std::unexpected(libgit2_error(errc::kSourceFetchFailed, context));
  UniqueFd fd(::open(pack_out.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid()) return std::unexpected(errno_error("create", pack_out, errno));
  struct Sink {
    int fd;
    const fs::path* path;
    std::optional<Error> error;
  } sink{fd.get(), &pack_out, std::nullopt};
  const auto write = [](void* buf, size_t size, void* payload) -> int {
    auto* s = static_cast<Sink*>(payload);
    auto w = write_all(s->fd, std::span(static_cast<const std::byte*>(buf), size), *s->path);
    if (w) return 0;
    s->error = w.error();
    return -1;
  };
  if (git_packbuilder_foreach(builder.get(), write, &sink) != 0) {
    if (sink.error) return std::unexpected(sink.error->with_context(context));
    return std::unexpected(libgit2_error(errc::kSourceFetchFailed, context));
  }
  TAKOSUMI_TRY(close_checked(std::move(fd), pack_out));
  char hex[GIT_OID_HEXSZ + 1] = {};
  git_oid_tostr(hex, sizeof hex, git_commit_tree_id(commit->get()));
  return std::string(hex);
}

}  // namespace takosumi::runner
