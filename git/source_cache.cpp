#include "git/source_cache.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <vector>

#include "common/encoding.hpp"
#include "common/fd_io.hpp"
#include "common/file_io.hpp"
#include "crypto/sha256.hpp"
#include "git/libgit2_error.hpp"
#include "git/remote_failure.hpp"
#include "git/remote_helper.hpp"
#include "common/failure_codes.hpp"
#include "protocol/source_url.hpp"

namespace takosumi::git {
namespace {

namespace fs = std::filesystem;

Result<Repository> open_or_init(const fs::path& path) {
  git_repository* repo = nullptr;
  std::error_code ec;
  if (fs::exists(path, ec) && git_repository_open_bare(&repo, path.c_str()) == 0) return Repository(repo);
  // Missing or unreadable: start over (it is only a cache).
  TAKOSUMI_TRY(remove_tree(path));
  if (git_repository_init(&repo, path.c_str(), /*is_bare=*/1) != 0)
    return std::unexpected(libgit2_error(errc::kSourceFetchFailed, "init cache " + path.string()));
  return Repository(repo);
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
  return !tips.empty() && git_graph_reachable_from_any(repo, &commit, tips.data(), tips.size()) == 1;
}

Result<git_oid> object_id(std::string_view hex) {
  git_oid oid;
  if (!is_object_id(hex) || git_oid_fromstrn(&oid, hex.data(), hex.size()) != 0)
    return fail(errc::kManifestInvalid, "commit \"" + std::string(hex.substr(0, 64)) + "\" is not a commit id");
  return oid;
}

Status index_pack(git_repository* repo, const fs::path& pack) {
  git_odb* raw = nullptr;
  if (git_repository_odb(&raw, repo) != 0)
    return std::unexpected(libgit2_error(errc::kSourceFetchFailed, "open object database"));
  Odb odb(raw);
  git_odb_writepack* writer = nullptr;
  if (git_odb_write_pack(&writer, odb.get(), nullptr, nullptr) != 0)
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

}  // namespace

bool is_object_id(std::string_view s) { return is_lower_hex(s, GIT_OID_HEXSZ); }

fs::path cache_repository_path(const fs::path& git_cache, std::string_view workspace_id,
                               std::string_view url) {
  const std::string workspace = crypto::sha256_hex("workspace\n" + std::string(workspace_id)).substr(0, 16);
  return git_cache / workspace / (crypto::sha256_hex(url).substr(0, 16) + ".git");
}

void remove_unkeyed_caches(const fs::path& git_cache) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(git_cache, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".git") || name.ends_with(".git.lock")) (void)remove_tree(entry.path());
  }
}

namespace {

// What a helper killed at its deadline leaves behind: a half-received pack
// (objects/pack/pack_git2_*, as large as the fetch got before it stopped) and lock files
// (refs, packed-refs, FETCH_HEAD, HEAD, a pack's index) that would fail every later fetch with
// GIT_ELOCKED. Only called with the cache's lock held, so no helper is writing.
void remove_leftovers(const fs::path& repository) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(repository / "objects/pack", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("pack_git2_") || name.ends_with(".lock")) fs::remove(entry.path(), ec);
  }
  for (const char* lock : {"packed-refs.lock", "FETCH_HEAD.lock", "HEAD.lock", "config.lock"})
    fs::remove(repository / lock, ec);
  for (auto it = fs::recursive_directory_iterator(repository / "refs", ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->path().extension() == ".lock") fs::remove(it->path(), ec);
}

}  // namespace

Result<SourceCache> SourceCache::open(const fs::path& git_cache, std::string_view workspace_id,
                                      const std::string& url) {
  ensure_libgit2();
  const fs::path path = cache_repository_path(git_cache, workspace_id, url);
  TAKOSUMI_TRY(ensure_directory(path.parent_path()));
  auto lock = FileLock::acquire(fs::path(path.string() + ".lock"));
  if (!lock) return fail(errc::kSourceFetchFailed, lock.error().message);
  remove_leftovers(path);
  auto repo = open_or_init(path);
  if (!repo) return std::unexpected(repo.error());
  return SourceCache(url, path, std::move(*lock), std::move(*repo));
}

Result<Commit> SourceCache::fetch_commit(std::string_view commit,
                                         const std::optional<protocol::GitCredential>& credential,
                                         const FetchSettings& settings) {
  auto oid = object_id(commit);
  if (!oid) return std::unexpected(oid.error());
  RemoteRequest request{RemoteOp::fetch, url_, path_, settings.ca_file, settings.max_bytes,
                        credential ? std::optional(credential->clone()) : std::nullopt,
                        settings.allow_internal_hosts};
  auto outcome = run_git_helper(settings.helper, request,
                                std::chrono::steady_clock::now() + settings.timeout, settings.cancelled);
  if (!outcome) return std::unexpected(Error{std::string(errc::kSourceFetchFailed), outcome.error().message});
  const RemoteContext context{"fetch", settings.timeout, settings.timeout_setting, settings.size_setting,
                              settings.internal_setting};
  TAKOSUMI_TRY(remote_status(*outcome, context));
  // The helper wrote packs and refs from its own process: read the repository afresh.
  repo_.reset();
  auto reopened = open_or_init(path_);
  if (!reopened) return std::unexpected(reopened.error());
  repo_ = std::move(*reopened);
  git_commit* raw = nullptr;
  const int rc = git_commit_lookup(&raw, repo_.get(), &*oid);
  const auto missing = [&] {
    return fail(errc::kSourceCommitMissing,
                "commit " + std::string(commit) + " does not exist in " + protocol::display_source_url(url_) +
                    " (no branch or tag reaches it; was history rewritten?)");
  };
  if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC) return missing();
  if (rc != 0) return std::unexpected(libgit2_error(errc::kSourceFetchFailed, "lookup commit"));
  Commit found(raw);
  if (!reachable_from_a_ref(repo_.get(), *oid)) return missing();
  return found;
}

Result<Commit> SourceCache::commit_from_pack(std::string_view commit, const fs::path& pack) {
  TAKOSUMI_TRY(index_pack(repo_.get(), pack));
  auto oid = object_id(commit);
  if (!oid) return std::unexpected(oid.error());
  git_commit* raw = nullptr;
  if (git_commit_lookup(&raw, repo_.get(), &*oid) != 0)
    return fail(errc::kSourceTreeMismatch, "the source pack does not hold commit " + std::string(commit));
  return Commit(raw);
}

Result<std::string> write_commit_pack(git_repository* repo, git_commit* commit, const fs::path& pack_out) {
  git_packbuilder* raw = nullptr;
  if (git_packbuilder_new(&raw, repo) != 0)
    return std::unexpected(libgit2_error(errc::kSourceFetchFailed, "pack"));
  PackBuilder builder(raw);
  // The commit with its whole tree; its parents stay out (the Run needs this one snapshot).
  if (git_packbuilder_insert_commit(builder.get(), git_commit_id(commit)) != 0)
    return std::unexpected(libgit2_error(errc::kSourceFetchFailed, "pack"));
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
    if (sink.error) return std::unexpected(*sink.error);
    return std::unexpected(libgit2_error(errc::kSourceFetchFailed, "pack"));
  }
  TAKOSUMI_TRY(close_checked(std::move(fd), pack_out));
  char hex[GIT_OID_HEXSZ + 1] = {};
  git_oid_tostr(hex, sizeof hex, git_commit_tree_id(commit));
  return std::string(hex);
}

Result<std::string> pack_source(const fs::path& git_cache, std::string_view workspace_id,
                                const std::string& url, std::string_view commit,
                                const std::optional<protocol::GitCredential>& credential,
                                const FetchSettings& settings, const fs::path& pack_out) {
  const std::string context = "pack " + protocol::display_source_url(url) + " at " + std::string(commit);
  auto cache = SourceCache::open(git_cache, workspace_id, url);
  if (!cache) return std::unexpected(cache.error().with_context(context));
  auto found = cache->fetch_commit(commit, credential, settings);
  if (!found) return std::unexpected(found.error().with_context(context));
  return with_context(write_commit_pack(cache->repository(), found->get(), pack_out), context);
}

}  // namespace takosumi::git
