#include "tests/support/git_https_server.hpp"

#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace takosumi::testing {
namespace {

namespace fs = std::filesystem;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string base64(const std::string& in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

struct Request {
  std::string method, path, query;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

// Reads from the TLS connection into buf until `done` says it holds what is needed.
bool read_more(SSL* ssl, std::string& buf) {
  char chunk[16384];
  const int n = SSL_read(ssl, chunk, sizeof chunk);
  if (n <= 0) return false;
  buf.append(chunk, static_cast<std::size_t>(n));
  return true;
}

bool read_request(SSL* ssl, Request& r) {
  std::string buf;
  std::size_t end;
  while ((end = buf.find("\r\n\r\n")) == std::string::npos)
    if (!read_more(ssl, buf) || buf.size() > (1 << 20)) return false;
  std::istringstream head(buf.substr(0, end));
  std::string line, target, version;
  std::getline(head, line);
  std::istringstream first(line);
  first >> r.method >> target >> version;
  const auto q = target.find('?');
  r.path = target.substr(0, q);
  if (q != std::string::npos) r.query = target.substr(q + 1);
  while (std::getline(head, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    r.headers[lower(line.substr(0, colon))] = value;
  }
  std::string rest = buf.substr(end + 4);
  if (auto it = r.headers.find("content-length"); it != r.headers.end()) {
    const std::size_t length = std::stoul(it->second);
    while (rest.size() < length)
      if (!read_more(ssl, rest)) return false;
    r.body = rest.substr(0, length);
  } else if (lower(r.headers["transfer-encoding"]) == "chunked") {
    std::size_t pos = 0;
    for (;;) {
      std::size_t eol;
      while ((eol = rest.find("\r\n", pos)) == std::string::npos)
        if (!read_more(ssl, rest)) return false;
      const std::size_t size = std::stoul(rest.substr(pos, eol - pos), nullptr, 16);
      while (rest.size() < eol + 2 + size + 2)
        if (!read_more(ssl, rest)) return false;
      r.body += rest.substr(eol + 2, size);
      pos = eol + 2 + size + 2;
      if (size == 0) break;
    }
  }
  return true;
}

void write_all(SSL* ssl, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const int n = SSL_write(ssl, data.data() + done, static_cast<int>(data.size() - done));
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// git http-backend for one request: the body on stdin (from a file), its CGI answer read whole.
std::string run_backend(const fs::path& root, const Request& r, const std::string& user) {
  char body_name[] = "/tmp/git-https-body-XXXXXX";
  const int body_fd = ::mkstemp(body_name);
  (void)!::write(body_fd, r.body.data(), r.body.size());
  ::lseek(body_fd, 0, SEEK_SET);
  int out[2];
  if (::pipe(out) != 0) throw std::runtime_error("pipe");
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(body_fd, 0);
    ::dup2(out[1], 1);
    ::close(out[0]);
    const std::vector<std::string> env{
        "GIT_PROJECT_ROOT=" + root.string(), "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1",
        "HOME=" + root.string(), "PATH=/usr/bin:/bin", "PATH_INFO=" + r.path,
        "QUERY_STRING=" + r.query, "REQUEST_METHOD=" + r.method,
        "CONTENT_TYPE=" + (r.headers.contains("content-type") ? r.headers.at("content-type") : ""),
        "CONTENT_LENGTH=" + std::to_string(r.body.size()), "REMOTE_ADDR=127.0.0.1",
        "REMOTE_USER=" + user, "GIT_HTTP_MAX_REQUEST_BUFFER=100M"};
    std::vector<char*> envp;
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    char* argv[] = {const_cast<char*>("git"), const_cast<char*>("-c"),
                    const_cast<char*>("safe.directory=*"), const_cast<char*>("http-backend"), nullptr};
    ::execve("/usr/bin/git", argv, envp.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(body_fd);
  ::unlink(body_name);
  std::string answer;
  char chunk[65536];
  for (ssize_t n; (n = ::read(out[0], chunk, sizeof chunk)) > 0;) answer.append(chunk, static_cast<std::size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return answer;
}

// The CGI answer as an HTTP/1.1 response.
std::string http_response(const std::string& cgi) {
  auto split = cgi.find("\r\n\r\n");
  std::size_t skip = 4;
  if (split == std::string::npos) {
    split = cgi.find("\n\n");
    skip = 2;
  }
  if (split == std::string::npos) return "HTTP/1.1 500 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
  std::istringstream head(cgi.substr(0, split));
  const std::string body = cgi.substr(split + skip);
  std::string status = "200 OK", headers;
  for (std::string line; std::getline(head, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (lower(line).starts_with("status:")) {
      status = line.substr(7);
      while (!status.empty() && status.front() == ' ') status.erase(0, 1);
    } else if (!line.empty()) {
      headers += line + "\r\n";
    }
  }
  return "HTTP/1.1 " + status + "\r\n" + headers + "Content-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

}  // namespace

struct GitHttpsServer::Tls {
  SSL_CTX* ctx = nullptr;
  ~Tls() { SSL_CTX_free(ctx); }
};

GitHttpsServer::GitHttpsServer(const TestCa& ca, fs::path root, std::string token)
    : root_(std::move(root)), token_(std::move(token)), tls_(std::make_unique<Tls>()) {
  const auto cert = ca.issue(CertificateRequest{"git-server", {"localhost"}, {"127.0.0.1"}});
  const fs::path dir = root_ / ".tls";
  fs::create_directories(dir);
  cert.write(dir / "server.pem", dir / "server.key");
  tls_->ctx = SSL_CTX_new(TLS_server_method());
  if (SSL_CTX_use_certificate_chain_file(tls_->ctx, (dir / "server.pem").c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(tls_->ctx, (dir / "server.key").c_str(), SSL_FILETYPE_PEM) != 1)
    throw std::runtime_error("GitHttpsServer: the certificate does not load");
  listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener_, 16) != 0)
    throw std::runtime_error("GitHttpsServer: cannot listen");
  socklen_t len = sizeof addr;
  ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { serve(); });
}

GitHttpsServer::~GitHttpsServer() {
  stopping_ = true;
  ::shutdown(listener_, SHUT_RDWR);
  ::close(listener_);
  thread_.join();
}

std::string GitHttpsServer::url(const std::string& name) const {
  return "https://localhost:" + std::to_string(port_) + "/" + name;
}

void GitHttpsServer::serve() {
  while (!stopping_) {
    const int fd = ::accept(listener_, nullptr, nullptr);
    if (fd < 0) return;
    handle(fd);
    ::close(fd);
  }
}

void GitHttpsServer::handle(int fd) {
  SSL* ssl = SSL_new(tls_->ctx);
  SSL_set_fd(ssl, fd);
  Request r;
  if (SSL_accept(ssl) == 1 && read_request(ssl, r)) {
    ++requests_;
    std::string user;
    bool allowed = token_.empty();
    if (!allowed) {
      const std::string header = r.headers.contains("authorization") ? r.headers.at("authorization") : "";
      const auto colon_user = [&](const std::string& u) { return "Basic " + base64(u + ":" + token_); };
      const auto space = header.find(' ');
      if (header.starts_with("Basic ") && space != std::string::npos) {
        // Any user name with the token as the password, as the forges take a token.
        std::string decoded(header.size(), '\0');
        const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(decoded.data()),
                                      reinterpret_cast<const unsigned char*>(header.data() + 6),
                                      static_cast<int>(header.size() - 6));
        if (n > 0) {
          decoded.resize(static_cast<std::size_t>(n));
          while (!decoded.empty() && decoded.back() == '\0') decoded.pop_back();
          const auto sep = decoded.find(':');
          if (sep != std::string::npos && header == colon_user(decoded.substr(0, sep))) {
            allowed = true;
            user = decoded.substr(0, sep);
          }
        }
      }
    }
    if (!allowed) {
      ++refused_;
      write_all(ssl, "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"git\"\r\n"
                     "Content-Length: 0\r\nConnection: close\r\n\r\n");
    } else {
      write_all(ssl, http_response(run_backend(root_, r, user)));
    }
  }
  SSL_shutdown(ssl);
  SSL_free(ssl);
}

}  // namespace takosumi::testing
