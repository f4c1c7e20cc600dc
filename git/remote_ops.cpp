#include "git/remote_ops.hpp"

#include <git2.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <sstream>
#include <vector>

#include "common/ascii.hpp"
#include "common/encoding.hpp"
#include "git/git_handles.hpp"
#include "git/guarded_socket.hpp"
#include "git/libgit2_error.hpp"

namespace takosumi::git {
namespace {

struct Callbacks {
  const RemoteRequest* request = nullptr;
  int credential_calls = 0;
  bool host_key_refused = false;
  bool too_large = false;
  std::string host;
  int port = 22;
};

// A NUL-terminated copy of a secret, for libgit2's C strings; zeroed when dropped.
SecretBytes c_string(const SecretBytes& s) {
  SecretBytes out(s.size() + 1);
  std::memcpy(out.data(), s.data(), s.size());
  out.data()[s.size()] = 0;
  return out;
}

const char* as_c(const SecretBytes& s) { return reinterpret_cast<const char*>(s.data()); }

// A libgit2 built without in-memory SSH keys reads the key from a path: a memfd's, so the key
// never touches a disk (nor stays behind when the helper is killed).
int ssh_key_from_memfd(git_credential** out, const std::string& user, const protocol::GitCredential& c) {
  static int fd = -1;
  if (fd < 0) {
    fd = ::memfd_create("ssh-key", MFD_CLOEXEC);
    if (fd < 0 || ::write(fd, c.private_key.data(), c.private_key.size()) !=
                      static_cast<ssize_t>(c.private_key.size())) {
      git_error_set_str(GIT_ERROR_OS, "could not hold the SSH key in memory");
      return -1;
    }
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  return git_credential_ssh_key_new(out, user.c_str(), nullptr, path.c_str(), nullptr);
}

int credential(git_credential** out, const char* /*url*/, const char* username_from_url,
               unsigned int allowed, void* payload) {
  auto* cb = static_cast<Callbacks*>(payload);
  const auto& c = cb->request->credential;
  // At most two calls: an SSH server asks for the user name first, then the key; past that the
  // credential was refused and is not offered again and again.
  if (!c || ++cb->credential_calls > 2) {
    git_error_set_str(GIT_ERROR_NET, "authentication required or refused");
    return GIT_EAUTH;
  }
  const std::string user = username_from_url && *username_from_url ? username_from_url : c->username;
  if (allowed & GIT_CREDENTIAL_USERNAME) return git_credential_username_new(out, user.c_str());
  if (c->is_ssh() && (allowed & GIT_CREDENTIAL_SSH_MEMORY)) {
    const SecretBytes key = c_string(c->private_key);
    return git_credential_ssh_key_memory_new(out, user.c_str(), nullptr, as_c(key), nullptr);
  }
  if (c->is_ssh() && (allowed & GIT_CREDENTIAL_SSH_KEY)) return ssh_key_from_memfd(out, user, *c);
  if (!c->is_ssh() && (allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT)) {
    const SecretBytes token = c_string(c->token);
    return git_credential_userpass_plaintext_new(out, c->username.c_str(), as_c(token));
  }
  git_error_set_str(GIT_ERROR_NET, "the server asks for a kind of credential the Connection does not hold");
  return GIT_EAUTH;
}

int certificate_check(git_cert* cert, int /*valid*/, const char* host, void* payload) {
  auto* cb = static_cast<Callbacks*>(payload);
  if (cert->cert_type != GIT_CERT_HOSTKEY_LIBSSH2) return GIT_PASSTHROUGH;  // TLS: libgit2 checks it
  const auto* key = reinterpret_cast<const git_cert_hostkey*>(cert);
  const auto& c = cb->request->credential;
  const bool listed = c && (key->type & GIT_CERT_SSH_RAW) && key->hostkey != nullptr &&
                      known_host_key(c->known_hosts, host ? host : cb->host, cb->port,
                                     std::string_view(key->hostkey, key->hostkey_len));
  if (listed) return 0;
  cb->host_key_refused = true;
  git_error_set_str(GIT_ERROR_SSH, "the server's host key is not in SSH_KNOWN_HOSTS");
  return GIT_ECERTIFICATE;
}

int transfer_progress(const git_indexer_progress* stats, void* payload) {
  auto* cb = static_cast<Callbacks*>(payload);
  if (stats->received_bytes <= cb->request->max_bytes) return 0;
  cb->too_large = true;
  git_error_set_str(GIT_ERROR_NET, "the repository is larger than the fetch limit");
  return -1;
}

git_remote_callbacks callbacks_for(Callbacks& cb) {
  git_remote_callbacks callbacks = GIT_REMOTE_CALLBACKS_INIT;
  callbacks.credentials = credential;
  callbacks.certificate_check = certificate_check;
  callbacks.transfer_progress = transfer_progress;
  callbacks.payload = &cb;
  return callbacks;
}

// Host and port of an ssh URL, for matching known_hosts ("[host]:port").
void locate(std::string_view url, Callbacks& cb) {
  std::string_view rest = url;
  if (rest.starts_with("ssh://")) {
    rest.remove_prefix(6);
    rest = rest.substr(0, rest.find('/'));
    if (auto at = rest.rfind('@'); at != std::string_view::npos) rest.remove_prefix(at + 1);
    if (rest.starts_with('[')) {
      const auto close = rest.find(']');
      cb.host = std::string(rest.substr(1, close - 1));
      if (close + 2 < rest.size()) cb.port = std::atoi(std::string(rest.substr(close + 2)).c_str());
    } else if (auto colon = rest.rfind(':'); colon != std::string_view::npos) {
      cb.host = std::string(rest.substr(0, colon));
      cb.port = std::atoi(std::string(rest.substr(colon + 1)).c_str());
    } else {
      cb.host = std::string(rest);
    }
  } else if (auto at = rest.find('@'); at != std::string_view::npos) {
    cb.host = std::string(rest.substr(at + 1, rest.find(':', at) - at - 1));
  }
}

RemoteResult failed(int rc, const Callbacks& cb, bool local) {
  const git_error* e = git_error_last();
  RemoteResult r;
  r.detail = e && e->message ? e->message : "unknown error";
  const std::string lower = ascii_lower(r.detail);
  if (refused_internal_address())
    r.failure = RemoteFailure::denied;
  else if (cb.too_large)
    r.failure = RemoteFailure::too_large;
  else if (cb.host_key_refused)
    r.failure = RemoteFailure::host_key;
  else if (local)
    r.failure = RemoteFailure::local;
  else if (rc == GIT_EAUTH || lower.find("authentication") != std::string::npos ||
           lower.find("401") != std::string::npos || lower.find("403") != std::string::npos ||
           lower.find("credentials") != std::string::npos)
    r.failure = RemoteFailure::auth;
  else
    r.failure = RemoteFailure::unreachable;
  return r;
}

void configure(const RemoteRequest& request) {
  ensure_libgit2();
  guard_sockets(request.allow_internal_hosts);
  // No git configuration of the host's applies (insteadOf, proxies, sslVerify = false, …).
  for (const auto level : {GIT_CONFIG_LEVEL_SYSTEM, GIT_CONFIG_LEVEL_XDG, GIT_CONFIG_LEVEL_GLOBAL,
                           GIT_CONFIG_LEVEL_PROGRAMDATA})
    git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, level, "");
  const char* system_bundle = "/etc/ssl/certs/ca-certificates.crt";
  if (!request.ca_file.empty())
    git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, request.ca_file.c_str(), "/etc/ssl/certs");
  else
    git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, system_bundle, nullptr);
}

std::string oid_hex(const git_oid& oid) {
  char buf[GIT_OID_HEXSZ + 1] = {};
  git_oid_tostr(buf, sizeof buf, &oid);
  return buf;
}

RemoteResult list_refs(const RemoteRequest& request) {
  Callbacks cb{&request};
  locate(request.url, cb);
  const bool local = request.url.starts_with("file://");
  git_remote* raw = nullptr;
  if (int rc = git_remote_create_detached(&raw, request.url.c_str()); rc != 0) return failed(rc, cb, local);
  Remote remote(raw);
  const git_remote_callbacks callbacks = callbacks_for(cb);
  if (int rc = git_remote_connect(remote.get(), GIT_DIRECTION_FETCH, &callbacks, nullptr, nullptr); rc != 0)
    return failed(rc, cb, local);
  const git_remote_head** heads = nullptr;
  size_t count = 0;
  if (int rc = git_remote_ls(&heads, &count, remote.get()); rc != 0) return failed(rc, cb, local);
  RemoteResult out;
  for (size_t i = 0; i < count; ++i) out.refs.emplace(heads[i]->name, oid_hex(heads[i]->oid));
  git_remote_disconnect(remote.get());
  return out;
}

RemoteResult fetch(const RemoteRequest& request) {
  Callbacks cb{&request};
  locate(request.url, cb);
  const bool local = request.url.starts_with("file://");
  git_repository* repo_raw = nullptr;
  if (int rc = git_repository_open_bare(&repo_raw, request.repository.c_str()); rc != 0) {
    RemoteResult r = failed(rc, cb, true);
    r.failure = RemoteFailure::helper;
    return r;
  }
  Repository repo(repo_raw);
  // The URL exactly as named: `url.<base>.insteadOf` would be skipped anyway (no configuration
  // is read), and Debian 12's libgit2 leaks a regex per remote that looks them up.
  git_remote_create_options create;
  git_remote_create_options_init(&create, GIT_REMOTE_CREATE_OPTIONS_VERSION);
  create.repository = repo.get();
  create.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF;
  git_remote* raw = nullptr;
  if (int rc = git_remote_create_with_opts(&raw, request.url.c_str(), &create); rc != 0)
    return failed(rc, cb, local);
  Remote remote(raw);
  char heads[] = "+refs/heads/*:refs/heads/*";
  char tags[] = "+refs/tags/*:refs/tags/*";
  char* specs[] = {heads, tags};
  const git_strarray refspecs{specs, 2};
  git_fetch_options opts;
  git_fetch_options_init(&opts, GIT_FETCH_OPTIONS_VERSION);
  opts.callbacks = callbacks_for(cb);
  opts.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;  // the refspecs already name every tag
  // Refs deleted upstream disappear here too, so reachability reflects the remote today.
  opts.prune = GIT_FETCH_PRUNE;
  if (int rc = git_remote_fetch(remote.get(), &refspecs, &opts, "takosumi fetch"); rc != 0)
    return failed(rc, cb, local);
  return {};
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  while (!line.empty()) {
    const auto start = line.find_first_not_of(" \t");
    if (start == std::string_view::npos) break;
    line.remove_prefix(start);
    const auto end = line.find_first_of(" \t");
    out.push_back(line.substr(0, end));
    line.remove_prefix(end == std::string_view::npos ? line.size() : end);
  }
  return out;
}

// "|1|<salt>|<hmac-sha1(salt, name)>", as ssh-keygen -H writes host names.
bool hashed_name_matches(std::string_view pattern, std::string_view name) {
  if (!pattern.starts_with("|1|")) return false;
  pattern.remove_prefix(3);
  const auto bar = pattern.find('|');
  if (bar == std::string_view::npos) return false;
  auto salt = base64_decode(pattern.substr(0, bar));
  auto hash = base64_decode(pattern.substr(bar + 1));
  if (!salt || !hash || hash->size() != 20) return false;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha1(), salt->data(), static_cast<int>(salt->size()),
       reinterpret_cast<const unsigned char*>(name.data()), name.size(), mac, &len);
  return len == 20 && std::memcmp(mac, hash->data(), 20) == 0;
}

bool name_matches(std::string_view patterns, std::string_view name) {
  while (!patterns.empty()) {
    const auto comma = patterns.find(',');
    const auto p = patterns.substr(0, comma);
    if (ascii_lower(p) == name || hashed_name_matches(p, name)) return true;
    patterns.remove_prefix(comma == std::string_view::npos ? patterns.size() : comma + 1);
  }
  return false;
}

}  // namespace

bool known_host_key(std::string_view known_hosts, std::string_view host, int port, std::string_view key) {
  // Host names match case-insensitively, as OpenSSH's (which lowercases before hashing, too).
  const std::string lower = ascii_lower(host);
  const std::string name = port == 22 || port == 0 ? lower : "[" + lower + "]:" + std::to_string(port);
  std::istringstream lines{std::string(known_hosts)};
  for (std::string line; std::getline(lines, line);) {
    auto w = words(line);
    if (w.empty() || w.front().starts_with('#')) continue;
    if (w.front() == "@revoked" || w.front() == "@cert-authority") continue;
    if (w.size() < 3 || !name_matches(w[0], name)) continue;
    auto blob = base64_decode(w[2]);
    if (blob && blob->size() == key.size() && std::memcmp(blob->data(), key.data(), key.size()) == 0)
      return true;
  }
  return false;
}

RemoteResult run_remote_request(const RemoteRequest& request) {
  configure(request);
  return request.op == RemoteOp::fetch ? fetch(request) : list_refs(request);
}

}  // namespace takosumi::git
