#include "controlplane/runs/git_ref_resolver.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/ascii.hpp"
#include "common/error_codes.hpp"
#include "common/offload.hpp"
#include "crypto/sha256.hpp"
#include "git/remote_failure.hpp"
#include "git/remote_helper.hpp"
#include "git/source_cache.hpp"
#include "common/failure_codes.hpp"
#include "protocol/source_url.hpp"

namespace takosumi::controlplane {
namespace {

// Candidate ref names for what a user typed, best first.
std::vector<std::string> candidates(const std::string& ref) {
  if (ref == "HEAD") return {"HEAD"};
  if (ref.starts_with("refs/")) return {ref + "^{}", ref};
  return {"refs/heads/" + ref, "refs/tags/" + ref + "^{}", "refs/tags/" + ref};
}

Error busy(std::size_t limit) {
  return Error{std::string(errc::kTooManyRequests),
               std::to_string(limit) + " source fetches or ref resolutions of this Workspace are "
               "already in progress; try again when they finish (sources.maxResolutionsPerWorkspace)"};
}

}  // namespace

bool is_commit_id(std::string_view ref) {
  return ref.size() == 40 && std::ranges::all_of(ref, [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
         });
}

GitRefResolver::GitRefResolver(RefResolverSettings settings)
    : settings_(std::move(settings)), pool_(std::max<std::size_t>(settings_.threads, 1)) {}

GitRefResolver::~GitRefResolver() { pool_.join(); }

bool GitRefResolver::take_slot(const std::string& workspace_id) {
  std::lock_guard lock(mutex_);
  auto& n = in_flight_[workspace_id];
  if (n >= settings_.per_workspace) return false;
  ++n;
  return true;
}

void GitRefResolver::give_back(const std::string& workspace_id) {
  std::lock_guard lock(mutex_);
  if (auto it = in_flight_.find(workspace_id); it != in_flight_.end() && --it->second == 0)
    in_flight_.erase(it);
}

// Given back when the coroutine's frame goes, whether the work finished, failed or the frame was
// destroyed unfinished (an io_context stopping): a Workspace never loses a place for good.
class GitRefResolver::Slot {
 public:
  Slot(GitRefResolver& owner, std::string workspace_id)
      : owner_(owner), workspace_id_(std::move(workspace_id)), held_(owner_.take_slot(workspace_id_)) {}
  ~Slot() {
    if (held_) owner_.give_back(workspace_id_);
  }
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;
  bool held() const { return held_; }

 private:
  GitRefResolver& owner_;
  std::string workspace_id_;
  bool held_;
};

boost::asio::awaitable<Result<std::string>> GitRefResolver::async_resolve(
    std::string workspace_id, std::string url, std::string ref,
    std::optional<protocol::GitCredential> credential) {
  if (is_commit_id(ref)) {
    co_return ascii_lower(ref);
  }
  const Slot slot(*this, workspace_id);
  if (!slot.held()) co_return std::unexpected(busy(settings_.per_workspace));
  // A named lambda: g++ 12 mishandles non-trivial temporaries inside a co_await expression.
  auto work = [this, &url, &ref, &credential] { return resolve(url, ref, credential); };
  auto resolved = co_await async_offload(pool_.get_executor(), std::move(work));
  co_return resolved;
}

boost::asio::awaitable<Result<GitRefResolver::PackedSource>> GitRefResolver::async_pack(
    std::string workspace_id, std::string url, std::string commit,
    std::optional<protocol::GitCredential> credential, std::filesystem::path pack_out) {
  const Slot slot(*this, workspace_id);
  if (!slot.held()) co_return std::unexpected(busy(settings_.per_workspace));
  // Digesting a pack of up to sources.maxFetchMiB is work for these threads too, never the io one.
  auto work = [&]() -> Result<PackedSource> {
    if (auto allowed = protocol::check_source_url(url, settings_.rules); !allowed)
      return std::unexpected(allowed.error());
    git::FetchSettings fetch{settings_.helper,    settings_.fetch_timeout,      settings_.max_fetch_bytes,
                             settings_.ca_file,   "sources.fetchTimeoutSeconds", "sources.maxFetchMiB",
                             {},                  settings_.rules.allow_internal_hosts,
                             "sources.allowLoopbackHosts"};
    auto tree = git::pack_source(settings_.git_cache, workspace_id, url, commit, credential, fetch, pack_out);
    if (!tree) return std::unexpected(tree.error());
    auto sha = crypto::sha256_file_hex(pack_out);
    if (!sha) return std::unexpected(sha.error());
    return PackedSource{std::move(*tree), std::move(*sha)};
  };
  auto packed = co_await async_offload(pool_.get_executor(), std::move(work));
  co_return packed;
}

Result<std::string> GitRefResolver::resolve(const std::string& url, const std::string& ref,
                                            const std::optional<protocol::GitCredential>& credential) const {
  const std::string context =
      "resolve ref \"" + ref + "\" of " + protocol::display_source_url(url);
  if (auto allowed = protocol::check_source_url(url, settings_.rules); !allowed)
    return std::unexpected(allowed.error().with_context(context));
  git::RemoteRequest request{git::RemoteOp::list_refs, url, {}, settings_.ca_file, 0,
                             credential ? std::optional(credential->clone()) : std::nullopt,
                             settings_.rules.allow_internal_hosts};
  auto outcome = git::run_git_helper(settings_.helper, request,
                                     std::chrono::steady_clock::now() + settings_.timeout);
  if (!outcome) {
    spdlog::error("{}: {}", context, outcome.error().to_string());
    return fail(errc::kSourceFetchFailed, context + ": the Git helper failed (see the control plane's log)");
  }
  // The remote's own words stay in the operator's log: they tell which local ports answer.
  if (outcome->result.failure)
    spdlog::info("{}: {} ({})", context, git::to_string(*outcome->result.failure), outcome->result.detail);
  TAKOSUMI_TRY(git::remote_status(*outcome, git::RemoteContext{context, settings_.timeout,
                                                               "sources.resolveTimeoutSeconds",
                                                               "sources.maxFetchMiB",
                                                               "sources.allowLoopbackHosts"}));
  for (const auto& name : candidates(ref))
    if (auto it = outcome->result.refs.find(name); it != outcome->result.refs.end()) return it->second;
  return fail(errc::kInvalidArgument,
              context + ": the repository has no branch, tag or HEAD named \"" + ref + "\"");
}

}  // namespace takosumi::controlplane
