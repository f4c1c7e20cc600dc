#pragma once
// The Capsule's source: one exact commit of a Git repository, checked out with libgit2 into a
// fresh directory. Each URL has a bare cache repository <git_cache>/<16 hex of sha256(url)>.git;
// when the commit is not in it, all branches and tags are fetched first. Concurrent checkouts of
// the same URL (threads or processes) serialize on a lock file beside the cache.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>

#include <filesystem>
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
Result<CheckedOutSource> checkout_source(const std::filesystem::path& git_cache,
                                         const protocol::SourceSpec& source,
                                         const std::filesystem::path& dest);

// checkout_source on the pool; resumes on the caller's executor.
boost::asio::awaitable<Result<CheckedOutSource>> async_checkout_source(
    boost::asio::thread_pool& pool, std::filesystem::path git_cache, protocol::SourceSpec source,
    std::filesystem::path dest);

// <git_cache>/<first 16 hex of sha256(url)>.git
std::filesystem::path cache_repository_path(const std::filesystem::path& git_cache,
                                            std::string_view url);

// The relative module path, refused when absolute or when it contains "..". "" and "." are the
// repository root. Errors: manifest_invalid.
Result<std::filesystem::path> safe_module_path(std::string_view module_path);

// The URL without "user:password@" so it can appear in messages.
std::string redact_url(std::string_view url);

}  // namespace takosumi::runner
