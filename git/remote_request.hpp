#pragma once
// What a process asks its Git helper (git/remote_helper.hpp) and what the helper answers, as JSON
// on its stdin and stdout. The helper reaches the network; the asking process never waits on a
// remote longer than its deadline, because it can kill the helper.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "common/secret_bytes.hpp"
#include "protocol/git_credential.hpp"

namespace takosumi::git {

enum class RemoteOp { list_refs, fetch };

struct RemoteRequest {
  RemoteOp op = RemoteOp::list_refs;
  std::string url;
  std::filesystem::path repository;  // fetch: the bare cache repository, which must exist
  std::filesystem::path ca_file;     // https: trust these CAs besides the system's; empty: system's
  std::uint64_t max_bytes = 1ull << 30;  // fetch: received pack data beyond this aborts it
  std::optional<protocol::GitCredential> credential;
  // Connections to loopback, link-local and multicast addresses are refused unless this is set
  // (git/guarded_socket.hpp; sources.allowLoopbackHosts, source.allowLoopbackHosts).
  bool allow_internal_hosts = false;
};

// Why a remote operation failed, in classes that reveal nothing the asking tenant may not know
// (git/remote_failure.hpp words them).
enum class RemoteFailure { auth, host_key, unreachable, too_large, local, helper, denied };

struct RemoteResult {
  std::map<std::string, std::string> refs;  // list_refs: ref name → 40-hex object id
  std::optional<RemoteFailure> failure;
  std::string detail;  // libgit2's message, for the operator's log only
};

inline constexpr std::size_t kMaxRemoteRequestBytes = 512 * 1024;
inline constexpr std::size_t kMaxRemoteResultBytes = 32u << 20;

// The request as JSON, in memory zeroed when dropped (it can hold a token or key).
SecretBytes serialize_remote_request(const RemoteRequest& request);
Result<RemoteRequest> parse_remote_request(std::string_view text);
std::string serialize_remote_result(const RemoteResult& result);
Result<RemoteResult> parse_remote_result(std::string_view text);

std::string_view to_string(RemoteFailure failure);

}  // namespace takosumi::git
