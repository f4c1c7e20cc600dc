#pragma once
// The Capsule's source: one exact commit of a Git repository, checked out with libgit2 into a
// fresh directory. Each URL has a bare cache repository <git_cache>/<16 hex of sha256(url)>.git;
// when the commit is not in it, all branches and tags are fetched first. Concurrent checkouts of
// the same URL (threads or processes) serialize on a lock file beside the cache.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "protocol/job_manifest.hpp"

namespace takosumi::runner {

struct CheckedOutSource {
  std::filesystem::path root;        // the checkout (dest)
  std::filesystem::path module_dir;  // root / modulePath
  std::string commit;
};

// Blocking. dest must not exist yet. Errors: manifest_invalid (commit id or modulePath malformed,
// modulePath absent from the commit), source_fetch_failed (cache or fetch failure, unsafe tree
// entry), source_commit_missing (commit not in the repository even after a fetch).
//
// With a pack (an offline Run bundle's source: source.pack_sha256 set), nothing is fetched: the
// pack file must have that sha256, libgit2 indexes it into the cache (checking every object
// against its id) and the commit must then be there; source_tree_mismatch when source.tree is set
// and the commit's tree is another. Without a pack, source.pack_sha256 must be empty.
Result<CheckedOutSource> checkout_source(const std::filesystem::path& git_cache,
                                         const protocol::SourceSpec& source,
                                         const std::filesystem::path& dest,
                                         const std::optional<std::filesystem::path>& pack = {});

// checkout_source on the pool; resumes on the caller's executor.
boost::asio::awaitable<Result<CheckedOutSource>> async_checkout_source(
    boost::asio::thread_pool& pool, std::filesystem::path git_cache, protocol::SourceSpec source,
    std::filesystem::path dest, std::optional<std::filesystem::path> pack = {});

// The commit of `source` as an offline Run bundle carries it: fetched into the cache as a checkout
// would, then its commit, tree and blobs (not its history) written to `pack_out` as a Git pack
// file. Returns the commit's tree id (40 hex). Errors as checkout_source's.
Result<std::string> pack_source(const std::filesystem::path& git_cache,
                                const protocol::SourceSpec& source,
                                const std::filesystem::path& pack_out);

// <git_cache>/<first 16 hex of sha256(url)>.git
std::filesystem::path cache_repository_path(const std::filesystem::path& git_cache,
                                            std::string_view url);

// The relative module path, refused when absolute or when it contains "..". "" and "." are the
// repository root. Errors: manifest_invalid.
Result<std::filesystem::path> safe_module_path(std::string_view module_path);

// The URL without "user:password@" so it can appear in messages.
std::string redact_url(std::string_view url);

}  // namespace takosumi::runner
