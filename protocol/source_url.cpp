#include "protocol/source_url.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "common/failure_codes.hpp"
#include "protocol/host_address.hpp"

namespace takosumi::protocol {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kAllowed =
    "use https://host/path, ssh://host/path or user@host:path (file:///path only under a file "
    "root the operator lists)";
constexpr std::string_view kNoCredentials =
    "source.gitUrl must not carry credentials (a password or token before \"@\"): give the "
    "Capsule a Connection of kind git (an https token or an SSH key) as source.connection";

std::unexpected<Error> denied(std::string message) {
  return fail(errc::kSourceDenied, std::move(message));
}

bool has_space_or_control(std::string_view s) {
  return std::ranges::any_of(s, [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u <= 0x20 || u == 0x7f;
  });
}

bool is_host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.';
}

bool valid_port(std::string_view p) {
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), port);
  return !p.empty() && ec == std::errc() && end == p.data() + p.size() && port >= 1 && port <= 65535;
}

// host, [v6], with an optional :port.
Result<std::string> parse_host(std::string_view authority, bool allow_port) {
  std::string_view host = authority;
  std::string_view port;
  if (host.starts_with('[')) {
    const auto close = host.find(']');
    if (close == std::string_view::npos) return denied("source.gitUrl has an unclosed \"[\" in its host");
    const auto v6 = host.substr(1, close - 1);
    if (v6.empty() || !std::ranges::all_of(v6, [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.'; }))
      return denied("source.gitUrl has a malformed IPv6 host");
    if (close + 1 < host.size()) {
      if (host[close + 1] != ':') return denied("source.gitUrl has a malformed host");
      port = host.substr(close + 2);
    }
    host = host.substr(0, close + 1);
  } else if (const auto colon = host.rfind(':'); colon != std::string_view::npos) {
    port = host.substr(colon + 1);
    host = host.substr(0, colon);
    if (port.empty()) return denied("source.gitUrl has an empty port");
  }
  if (!port.empty() && (!allow_port || !valid_port(port)))
    return denied("source.gitUrl has a malformed port \"" + std::string(port) + "\"");
  if (!host.starts_with('[') &&
      (host.empty() || host.front() == '-' || host.front() == '.' || !std::ranges::all_of(host, is_host_char)))
    return denied("source.gitUrl has a malformed host name");
  return std::string(host);
}

bool valid_user(std::string_view user) {
  return !user.empty() && user.size() <= 64 && user.front() != '-' &&
         std::ranges::all_of(user, [](char c) { return is_host_char(c) || c == '_'; });
}

// scheme://authority/path with a non-empty path.
struct Split {
  std::string_view authority;
  std::string_view path;
};

Result<Split> split_authority(std::string_view rest) {
  const auto slash = rest.find('/');
  if (slash == std::string_view::npos || slash + 1 >= rest.size())
    return denied("source.gitUrl names no repository path after the host");
  return Split{rest.substr(0, slash), rest.substr(slash)};
}

Result<SourceUrl> parse_https(std::string_view rest) {
  auto split = split_authority(rest);
  if (!split) return std::unexpected(split.error());
  if (split->authority.find('@') != std::string_view::npos) return denied(std::string(kNoCredentials));
  auto host = parse_host(split->authority, true);
  if (!host) return std::unexpected(host.error());
  return SourceUrl{SourceScheme::https, *host, "", {}};
}

Result<SourceUrl> ssh_source(std::string_view userinfo, std::string_view authority, bool allow_port) {
  if (userinfo.find(':') != std::string_view::npos) return denied(std::string(kNoCredentials));
  if (!userinfo.empty() && !valid_user(userinfo))
    return denied("source.gitUrl has a malformed user name (letters, digits, \".\", \"-\", \"_\")");
  auto host = parse_host(authority, allow_port);
  if (!host) return std::unexpected(host.error());
  return SourceUrl{SourceScheme::ssh, *host, std::string(userinfo), {}};
}

Result<SourceUrl> parse_ssh(std::string_view rest) {
  auto split = split_authority(rest);
  if (!split) return std::unexpected(split.error());
  const auto at = split->authority.rfind('@');
  if (at == std::string_view::npos) return ssh_source("", split->authority, true);
  return ssh_source(split->authority.substr(0, at), split->authority.substr(at + 1), true);
}

Result<SourceUrl> parse_file(std::string_view rest) {
  if (!rest.starts_with('/'))
    return denied("a file URL names no host: write file:///absolute/path");
  if (rest.find('%') != std::string_view::npos || rest.find('\\') != std::string_view::npos)
    return denied("a file URL must not contain \"%\" or \"\\\"");
  const fs::path path(rest);
  for (const auto& part : path)
    if (part == ".." || part == ".") return denied("a file URL must not contain \".\" or \"..\"");
  fs::path normal = path.lexically_normal();
  if (normal.has_filename() == false && normal != "/") normal = normal.parent_path();
  return SourceUrl{SourceScheme::file, "", "", normal};
}

// user@host:path, what git reads as ssh when no scheme is given.
Result<SourceUrl> parse_scp_like(std::string_view url) {
  const auto colon = url.find(':');
  const auto at = url.find('@');
  if (colon != std::string_view::npos && at != std::string_view::npos && colon < at)
    return denied(std::string(kNoCredentials));
  if (at == std::string_view::npos || colon == std::string_view::npos ||
      url.substr(0, colon).find('/') != std::string_view::npos)
    return denied("source.gitUrl \"" + display_source_url(url) + "\" is not an allowed URL: " +
                  std::string(kAllowed));
  if (colon + 1 >= url.size()) return denied("source.gitUrl names no repository path after the host");
  return ssh_source(url.substr(0, at), url.substr(at + 1, colon - at - 1), false);
}

bool within(const fs::path& path, const fs::path& dir) {
  auto p = path.begin();
  for (auto d = dir.begin(); d != dir.end(); ++d, ++p) {
    if (d->empty()) continue;  // a trailing separator
    if (p == path.end() || *p != *d) return false;
  }
  return true;
}

fs::path resolved(const fs::path& p) {
  std::error_code ec;
  auto r = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : r;
}

}  // namespace

Result<SourceUrl> parse_source_url(std::string_view url) {
  if (url.empty() || has_space_or_control(url))
    return denied("source.gitUrl must be a non-empty URL without spaces or control characters");
  if (url.starts_with("https://")) return parse_https(url.substr(8));
  if (url.starts_with("ssh://")) return parse_ssh(url.substr(6));
  if (url.starts_with("file://")) return parse_file(url.substr(7));
  if (const auto scheme = url.find("://"); scheme != std::string_view::npos)
    return denied("source.gitUrl scheme \"" + std::string(url.substr(0, std::min<std::size_t>(scheme, 16))) +
                  "\" is not allowed: " + std::string(kAllowed));
  if (url.find("::") != std::string_view::npos)
    return denied("source.gitUrl transports (\"x::\") are not allowed: " + std::string(kAllowed));
  if (url.front() == '/' || url.front() == '.' || url.front() == '~')
    return denied("source.gitUrl must not be a local path: " + std::string(kAllowed));
  return parse_scp_like(url);
}

Result<fs::path> check_file_source(const SourceUrl& url, const std::vector<fs::path>& roots,
                                   const std::vector<fs::path>& private_dirs,
                                   std::string_view roots_setting) {
  const auto refuse = [&] {
    return denied("file://" + url.local_path.string() + " is not under " + std::string(roots_setting) +
                  (roots.empty() ? " (none are listed: local repositories are off)" : "") +
                  "; list the directory holding the repository there, or use an https:// or "
                  "ssh:// URL");
  };
  if (url.scheme != SourceScheme::file) return url.local_path;
  // Links resolved: a link under a root that leads elsewhere leads out of it.
  const fs::path real = resolved(url.local_path);
  const bool under_root = std::ranges::any_of(roots, [&](const fs::path& r) { return within(real, resolved(r)); });
  if (!under_root) return refuse();
  for (const auto& dir : private_dirs)
    if (within(real, resolved(dir)) || within(resolved(dir), real)) return refuse();
  return real;
}

Result<SourceUrl> check_source_url(std::string_view url, const SourceRules& rules) {
  auto parsed = parse_source_url(url);
  if (!parsed) return parsed;
  const std::string section(rules.section);
  if (auto ok = check_file_source(*parsed, rules.file_roots, rules.private_dirs, section + ".fileRoots"); !ok)
    return std::unexpected(ok.error());
  if (parsed->scheme != SourceScheme::file && !rules.allow_internal_hosts && names_internal_host(parsed->host))
    return denied("source.gitUrl names " + parsed->host + ", " + std::string(kInternalAddressWords) +
                  ": sources reach other hosts only (" +
                  section + ".allowLoopbackHosts allows it, for a Git server on this machine)");
  return parsed;
}

std::string display_source_url(std::string_view url) {
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos) {
    // user:password@host:path keeps the user only. The password may hold "@" too: the host
    // follows the last "@" before the path's first "/".
    const auto first_at = url.find('@');
    const auto colon = url.find(':');
    if (first_at == std::string_view::npos || colon > first_at) return std::string(url);
    const auto at = url.substr(0, url.find('/')).rfind('@');
    return std::string(url.substr(0, colon)) + std::string(url.substr(at));
  }
  const auto start = scheme + 3;
  const auto end = std::min(url.find('/', start), url.size());
  const auto at = url.substr(start, end - start).rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  const auto userinfo = url.substr(start, at);
  const bool web = url.starts_with("http");
  std::string kept;
  if (!web) kept = std::string(userinfo.substr(0, userinfo.find(':'))) + "@";
  if (kept == "@") kept.clear();
  return std::string(url.substr(0, start)) + kept + std::string(url.substr(start + at + 1));
}

}  // namespace takosumi::protocol
