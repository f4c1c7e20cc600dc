#include "controlplane/runs/git_ref_resolver.hpp"

#include <git2.h>

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "common/error_codes.hpp"
#include "protocol/failure_codes.hpp"

namespace takosumi::controlplane {
namespace {

struct RemoteDeleter {
  void operator()(git_remote* r) const { git_remote_free(r); }
};

Error libgit2_error(std::string_view what) {
  const git_error* e = git_error_last();
  return Error{std::string(errc::kSourceFetchFailed),
               std::string(what) + ": libgit2: " + (e && e->message ? e->message : "unknown error")};
}

std::string oid_hex(const git_oid& oid) {
  char buf[GIT_OID_HEXSZ + 1] = {};
  git_oid_tostr(buf, sizeof buf, &oid);
  return buf;
}

// Candidate ref names for what a user typed, best first.
std::vector<std::string> candidates(const std::string& ref) {
  if (ref == "HEAD") return {"HEAD"};
  if (ref.starts_with("refs/")) return {ref + "^{}", ref};
  return {"refs/heads/" + ref, "refs/tags/" + ref + "^{}", "refs/tags/" + ref};
}

Result<std::map<std::string, std::string>> list_refs(const std::string& url) {
  git_remote* raw = nullptr;
  if (git_remote_create_detached(&raw, url.c_str()) != 0)
    return std::unexpected(libgit2_error("open remote"));
  std::unique_ptr<git_remote, RemoteDeleter> remote(raw);
  git_remote_callbacks callbacks = GIT_REMOTE_CALLBACKS_INIT;
  if (git_remote_connect(remote.get(), GIT_DIRECTION_FETCH, &callbacks, nullptr, nullptr) != 0)
    return std::unexpected(libgit2_error("connect"));
  const git_remote_head** heads = nullptr;
  size_t count = 0;
  if (git_remote_ls(&heads, &count, remote.get()) != 0)
    return std::unexpected(libgit2_error("list refs"));
  std::map<std::string, std::string> refs;
  for (size_t i = 0; i < count; ++i) refs.emplace(heads[i]->name, oid_hex(heads[i]->oid));
  git_remote_disconnect(remote.get());
  return refs;
}

}  // namespace

bool is_commit_id(std::string_view ref) {
  return ref.size() == 40 &&
         std::ranges::all_of(ref, [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
         });
}

GitRefResolver::GitRefResolver() { git_libgit2_init(); }
GitRefResolver::~GitRefResolver() { git_libgit2_shutdown(); }

Result<std::string> GitRefResolver::resolve(const std::string& url, const std::string& ref) const {
  if (is_commit_id(ref)) {
    std::string lower = ref;
    std::ranges::transform(lower, lower.begin(), [](unsigned char c) { return std::tolower(c); });
    return lower;
  }
  const std::string context = "resolve ref \"" + ref + "\" of " + url;
  auto refs = list_refs(url);
  if (!refs) return std::unexpected(refs.error().with_context(context));
  for (const auto& name : candidates(ref))
    if (auto it = refs->find(name); it != refs->end()) return it->second;
  return fail(errc::kInvalidArgument,
              context + ": the repository has no branch, tag or HEAD named \"" + ref + "\"");
}

}  // namespace takosumi::controlplane
