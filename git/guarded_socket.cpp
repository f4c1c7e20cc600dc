#include "git/guarded_socket.hpp"

#include <git2.h>
#include <git2/sys/stream.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "protocol/host_address.hpp"

namespace takosumi::git {
namespace {

bool g_allow_internal = false;
bool g_refused = false;

// Laid out as libgit2's own git_socket_stream (src/libgit2/streams/socket.h): its SSH transport
// takes the descriptor for libssh2 straight from that struct, whoever made the stream. A libgit2
// that changes the layout breaks SshSourceTest, not silently the guard: https reads and writes
// through the callbacks only.
struct GuardedSocket {
  git_stream parent;
  char* host = nullptr;
  char* port = nullptr;
  int fd = -1;  // git_socket_stream::s
};
static_assert(offsetof(GuardedSocket, parent) == 0);

GuardedSocket* self(git_stream* stream) { return reinterpret_cast<GuardedSocket*>(stream); }

int connect_guarded(git_stream* stream) {
  GuardedSocket* s = self(stream);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(s->host, s->port, &hints, &found); rc != 0) {
    git_error_set(GIT_ERROR_NET, "failed to resolve address for %s: %s", s->host, ::gai_strerror(rc));
    return -1;
  }
  bool refused = false;
  int last_errno = 0;
  for (const addrinfo* a = found; a != nullptr && s->fd < 0; a = a->ai_next) {
    if (!g_allow_internal && protocol::is_internal_address(a->ai_addr)) {
      refused = true;
      continue;
    }
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      last_errno = errno;
      continue;
    }
    int rc;
    do rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    while (rc != 0 && errno == EINTR);
    if (rc == 0) {
      s->fd = fd;
      break;
    }
    last_errno = errno;
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (s->fd >= 0) return 0;
  if (refused) {
    g_refused = true;
    git_error_set(GIT_ERROR_NET, "%s resolves to %s", s->host, protocol::kInternalAddressWords.data());
  } else {
    git_error_set(GIT_ERROR_NET, "failed to connect to %s: %s", s->host, std::strerror(last_errno));
  }
  return -1;
}

ssize_t read_guarded(git_stream* stream, void* data, size_t len) {
  ssize_t n;
  do n = ::recv(self(stream)->fd, data, len, 0);
  while (n < 0 && errno == EINTR);
  if (n < 0) git_error_set(GIT_ERROR_NET, "error receiving socket data: %s", std::strerror(errno));
  return n;
}

ssize_t write_guarded(git_stream* stream, const char* data, size_t len, int flags) {
  size_t off = 0;
  while (off < len) {
    const ssize_t n = ::send(self(stream)->fd, data + off, len - off, flags | MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      git_error_set(GIT_ERROR_NET, "error sending data: %s", std::strerror(errno));
      return -1;
    }
    off += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(off);
}

int close_guarded(git_stream* stream) {
  GuardedSocket* s = self(stream);
  const int rc = s->fd >= 0 ? ::close(s->fd) : 0;
  s->fd = -1;
  return rc;
}

void free_guarded(git_stream* stream) {
  close_guarded(stream);
  GuardedSocket* s = self(stream);
  std::free(s->host);
  std::free(s->port);
  delete s;
}

int new_guarded(git_stream** out, const char* host, const char* port) {
  auto* s = new GuardedSocket{};
  s->parent.version = GIT_STREAM_VERSION;
  s->parent.connect = connect_guarded;
  s->parent.read = read_guarded;
  s->parent.write = write_guarded;
  s->parent.close = close_guarded;
  s->parent.free = free_guarded;
  s->host = ::strdup(host ? host : "");
  s->port = ::strdup(port ? port : "");
  *out = &s->parent;
  return 0;
}

}  // namespace

void guard_sockets(bool allow_internal) {
  g_allow_internal = allow_internal;
  g_refused = false;
  static git_stream_registration registration{GIT_STREAM_VERSION, new_guarded, nullptr};
  git_stream_register(GIT_STREAM_STANDARD, &registration);
}

bool refused_internal_address() { return g_refused; }

}  // namespace takosumi::git
