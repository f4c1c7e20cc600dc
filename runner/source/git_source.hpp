#pragma once
// The Capsule's source: one exact commit of a Git repository, checked out with libgit2 into a
// fresh directory, from the agent's cache of that Workspace's repository (git/source_cache.hpp),
// refreshed through the Git helper with the Capsule's Connection of kind git when it has one.
// The URL is checked first (protocol/source_url.hpp): the agent never fetches what its own
// configuration does not allow, whatever a manifest names.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "git/source_cache.hpp"
#include "protocol/git_credential.hpp"
#include "protocol/job_manifest.hpp"
#include "protocol/source_url.hpp"

namespace takosumi::runner {

struct CheckedOutSource {
  std::filesystem::path root;        // the checkout (dest)
  std::filesystem::path module_dir;  // root / modulePath
  std::string commit;
};

// Where a Run's source may come from and how it is fetched.
struct SourceAccess {
  std::filesystem::path git_cache;
  // source.fileRoots, source.allowLoopbackHosts; private_dirs: the agent's own directories.
  protocol::SourceRules rules;
  git::FetchSettings fetch;
  // What a checkout may write (limits.workspaceMiB; 0: no limit) and how many entries: checked
  // from each object's header before it is read, so a small pack that names one huge blob many
  // times never reaches the disk or the agent's memory.
  std::uint64_t max_bytes = 0;
  std::uint64_t max_entries = 250'000;
};

// No single file of a checkout is read into the agent's memory past this.
inline constexpr std::uint64_t kMaxCheckoutFileBytes = 512ull << 20;

// What one checkout takes.
struct SourceRequest {
  std::string workspace_id;
  protocol::SourceSpec source;
  std::optional<protocol::GitCredential> credential;  // the Capsule's Connection of kind git
  std::optional<std::filesystem::path> pack;          // an offline Run bundle's source pack
};

// Blocking. dest must not exist yet. Errors: source_denied (the URL is not allowed here),
// limit_exceeded (the commit's tree is larger than access.max_bytes or max_entries, or holds a
// file past kMaxCheckoutFileBytes),
// manifest_invalid (commit id or modulePath malformed, modulePath absent from the commit),
// source_fetch_failed (cache or fetch failure, unsafe tree entry), source_commit_missing (commit
// not in the repository even after a fetch), cancelled (access.fetch.cancelled said so).
//
// With a pack (an offline Run bundle's source: source.pack_sha256 set), nothing is fetched: the
// pack file must have that sha256, libgit2 indexes it into the cache (checking every object
// against its id) and the commit must then be there; source_tree_mismatch when source.tree is set
// and the commit's tree is another. Without a pack, source.pack_sha256 must be empty.
Result<CheckedOutSource> checkout_source(const SourceAccess& access, const SourceRequest& request,
                                         const std::filesystem::path& dest);

// checkout_source on the pool; resumes on the caller's executor.
boost::asio::awaitable<Result<CheckedOutSource>> async_checkout_source(
    boost::asio::thread_pool& pool, const SourceAccess& access, SourceRequest request,
    std::filesystem::path dest);

// The relative module path, refused when absolute or when it contains "..". "" and "." are the
// repository root. Errors: manifest_invalid.
Result<std::filesystem::path> safe_module_path(std::string_view module_path);

}  // namespace takosumi::runner
