#pragma once
// The bare repositories a program keeps of Capsules' sources, one per Workspace and URL:
// <git_cache>/<16 hex of sha256(workspace id)>/<16 hex of sha256(url)>.git. Keyed by Workspace, so
// one Workspace's copy is never what another's Run reads, whatever URL it names. Each is locked
// while used (across threads and processes sharing the directory) and refreshed from the remote
// through the Git helper (git/remote_helper.hpp), so a hung or huge remote costs at most the
// fetch's deadline and size.
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "common/file_lock.hpp"
#include "git/git_handles.hpp"
#include "protocol/git_credential.hpp"

namespace takosumi::git {

struct FetchSettings {
  std::filesystem::path helper;  // the program run as the Git helper (this one: /proc/self/exe)
  std::chrono::seconds timeout{300};
  std::uint64_t max_bytes = 1ull << 30;
  std::filesystem::path ca_file;  // https: more CAs to trust; empty: the system's only
  std::string_view timeout_setting = "source.fetchTimeoutSeconds";
  std::string_view size_setting = "source.maxFetchMiB";
  std::function<bool()> cancelled;  // polled while the helper runs
  // From the program's protocol::SourceRules: what the helper may connect to.
  bool allow_internal_hosts = false;
  std::string_view internal_setting = "source.allowLoopbackHosts";
};

std::filesystem::path cache_repository_path(const std::filesystem::path& git_cache,
                                            std::string_view workspace_id, std::string_view url);

// Removes what caches before Workspace keys left in git_cache (<hex>.git and its lock): they
// could serve one Workspace's repository to another. Best effort.
void remove_unkeyed_caches(const std::filesystem::path& git_cache);

class SourceCache {
 public:
  // Locks and opens (or creates) the cache of `url` for `workspace_id`. source_fetch_failed.
  static Result<SourceCache> open(const std::filesystem::path& git_cache, std::string_view workspace_id,
                                  const std::string& url);

  git_repository* repository() const { return repo_.get(); }

  // Fetches every branch and tag (pruning the rest), then the commit as the remote has it now:
  // source_commit_missing when it is not there or no branch or tag reaches it any more (history
  // rewritten, branch deleted), source_fetch_failed or cancelled when the fetch fails.
  Result<Commit> fetch_commit(std::string_view commit, const std::optional<protocol::GitCredential>& credential,
                              const FetchSettings& settings);
  // An offline bundle's pack, indexed (libgit2 checks every object against its id); then the
  // commit from it. source_tree_mismatch when the pack does not hold it.
  Result<Commit> commit_from_pack(std::string_view commit, const std::filesystem::path& pack);

 private:
  SourceCache(std::string url, std::filesystem::path path, FileLock lock, Repository repo)
      : url_(std::move(url)), path_(std::move(path)), lock_(std::move(lock)), repo_(std::move(repo)) {}
  std::string url_;
  std::filesystem::path path_;
  FileLock lock_;    // released after repo_ is closed
  Repository repo_;
};

// The commit, its tree and blobs (not its history) as a Git pack file at pack_out; returns the
// commit's tree id (40 hex).
Result<std::string> write_commit_pack(git_repository* repo, git_commit* commit,
                                      const std::filesystem::path& pack_out);

// The commit of `url` as an offline Run bundle carries it: fetched into the Workspace's cache as a
// checkout would, then packed (write_commit_pack). Errors as fetch_commit's, with the context.
Result<std::string> pack_source(const std::filesystem::path& git_cache, std::string_view workspace_id,
                                const std::string& url, std::string_view commit,
                                const std::optional<protocol::GitCredential>& credential,
                                const FetchSettings& settings, const std::filesystem::path& pack_out);

bool is_object_id(std::string_view s);

}  // namespace takosumi::git
