#pragma once
// Resolves a Capsule's `ref` to one commit id without cloning, as `git ls-remote` does: in the Git
// helper (git/remote_helper.hpp), on threads of its own, each resolution at most `timeout` long —
// so a remote that accepts and never answers holds one of those threads for the deadline and
// nothing else: not the blocking-work pool that checks agents' uploads, not the io thread. A
// Workspace has at most `per_workspace` resolutions in flight (too_many_requests beyond), so one
// tenant cannot take every thread either. A 40-hex ref is taken as the commit itself; branch names
// win over tag names; annotated tags resolve to the commit they point at.
// Errors: source_denied (the URL is not allowed: protocol/source_url.hpp), source_fetch_failed
// (what the remote said, never what this host has: git/remote_failure.hpp), invalid_argument (no
// such ref), too_many_requests.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "protocol/git_credential.hpp"
#include "protocol/source_url.hpp"

namespace takosumi::controlplane {

struct RefResolverSettings {
  std::filesystem::path helper = "/proc/self/exe";  // run as `<helper> internal-git-remote`
  std::chrono::seconds timeout{30};                 // sources.resolveTimeoutSeconds
  std::size_t threads = 8;                          // sources.maxConcurrentResolutions
  std::size_t per_workspace = 2;                    // sources.maxResolutionsPerWorkspace
  std::filesystem::path ca_file;                    // sources.caFile
  // sources.fileRoots, sources.allowLoopbackHosts; private_dirs: the control plane's dataDir.
  protocol::SourceRules rules{{}, {}, false, "sources"};
  // Offline Run bundles: the source fetched into <git_cache> and packed.
  std::filesystem::path git_cache;                  // <dataDir>/git-cache
  std::chrono::seconds fetch_timeout{300};          // sources.fetchTimeoutSeconds
  std::uint64_t max_fetch_bytes = 1ull << 30;       // sources.maxFetchMiB
};

class GitRefResolver {
 public:
  explicit GitRefResolver(RefResolverSettings settings);
  ~GitRefResolver();
  GitRefResolver(const GitRefResolver&) = delete;
  GitRefResolver& operator=(const GitRefResolver&) = delete;

  const RefResolverSettings& settings() const { return settings_; }

  // Resumes on the caller's executor.
  boost::asio::awaitable<Result<std::string>> async_resolve(
      std::string workspace_id, std::string url, std::string ref,
      std::optional<protocol::GitCredential> credential);

  struct PackedSource {
    std::string tree;    // the commit's tree id
    std::string sha256;  // of the pack file, hex
  };
  // An offline Run bundle's source (git/source_cache.hpp pack_source) into pack_out, and its
  // digest, on the same threads under the same per-Workspace limit. Errors as the fetch's
  // (source_denied, source_fetch_failed, source_commit_missing), too_many_requests.
  boost::asio::awaitable<Result<PackedSource>> async_pack(
      std::string workspace_id, std::string url, std::string commit,
      std::optional<protocol::GitCredential> credential, std::filesystem::path pack_out);

 private:
  Result<std::string> resolve(const std::string& url, const std::string& ref,
                              const std::optional<protocol::GitCredential>& credential) const;
  class Slot;  // one of a Workspace's in-flight places, given back however the work ends
  bool take_slot(const std::string& workspace_id);
  void give_back(const std::string& workspace_id);

  RefResolverSettings settings_;
  boost::asio::thread_pool pool_;
  std::mutex mutex_;
  std::map<std::string, std::size_t> in_flight_;  // per Workspace
};

bool is_commit_id(std::string_view ref);

}  // namespace takosumi::controlplane
