#pragma once
// A Capsule's source.gitUrl as both sides accept it (docs/security.md "Sources"). A repository is
// one Workspace's by construction: only remote schemes that name a host reach one (https, ssh),
// a local repository only under a root the operator listed (sources.fileRoots in control.yaml,
// source.fileRoots in agent.yaml; none by default), and never inside the program's own data (its
// git cache holds other Workspaces' repositories). Credentials never ride in the URL: they come
// from a Connection of kind git (protocol/git_credential.hpp). Pure functions, but for
// check_file_source, which resolves links.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"

namespace takosumi::protocol {

enum class SourceScheme { https, ssh, file };

struct SourceUrl {
  SourceScheme scheme = SourceScheme::https;
  std::string host;  // empty for file
  std::string user;  // ssh only (git@…); never a password
  std::filesystem::path local_path;  // file only: absolute, normalized
};

// https://host[:port]/path, ssh://[user@]host[:port]/path, user@host:path (scp-like ssh), or
// file:///absolute/path. Errors (source_denied) say what to change: a password or token in the
// URL (use a Connection of kind git), a scheme that is not allowed (http, git, ext, a bare path),
// a malformed host, a file URL with a host, "..", "%" or a backslash.
Result<SourceUrl> parse_source_url(std::string_view url);

// The local path of a file source when it lies under one of `roots` once links are resolved,
// and under none of `private_dirs` (the program's own data: git cache, state, workspaces).
// source_denied naming `roots_setting` otherwise; the message is the same whether the path exists
// or not, so it tells nothing about the host's files.
Result<std::filesystem::path> check_file_source(const SourceUrl& url,
                                                const std::vector<std::filesystem::path>& roots,
                                                const std::vector<std::filesystem::path>& private_dirs,
                                                std::string_view roots_setting);

// What one program accepts as a source, from its configuration.
struct SourceRules {
  std::vector<std::filesystem::path> file_roots;    // <section>.fileRoots
  std::vector<std::filesystem::path> private_dirs;  // the program's own data
  // <section>.allowLoopbackHosts: hosts on loopback, link-local or multicast addresses
  // (protocol/host_address.hpp) may be named and reached. Off by default.
  bool allow_internal_hosts = false;
  std::string_view section = "source";  // "sources" for the control plane: names the settings
};

// parse_source_url, then check_file_source for a file URL, then for a remote one that its host
// is not named as an internal address ("localhost", "127.0.0.1", "[::1]", "169.254.169.254") —
// the Git helper checks the addresses names resolve to when it connects.
Result<SourceUrl> check_source_url(std::string_view url, const SourceRules& rules);

// The URL as it may be shown: any userinfo of an http(s) URL and any password of another removed
// (records made before credentials were refused).
std::string display_source_url(std::string_view url);

}  // namespace takosumi::protocol
