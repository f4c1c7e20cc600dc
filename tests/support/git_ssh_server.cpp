#include "tests/support/git_ssh_server.hpp"

#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace takosumi::testing {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void keygen(const fs::path& key) {
  const std::string cmd = "ssh-keygen -q -t ed25519 -N '' -f '" + key.string() + "' </dev/null >/dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("GitSshServer: ssh-keygen failed");
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

bool accepts(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<unsigned short>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

// "ssh-ed25519 AAAA… comment" → "ssh-ed25519 AAAA…"
std::string key_part(const std::string& pub) {
  std::istringstream in(pub);
  std::string type, blob;
  in >> type >> blob;
  return type + " " + blob;
}

}  // namespace

GitSshServer::GitSshServer(fs::path dir) : dir_(std::move(dir)) {
  fs::create_directories(dir_);
  const passwd* pw = ::getpwuid(::geteuid());
  user_ = pw ? pw->pw_name : "root";
  keygen(dir_ / "host_ed25519");
  keygen(dir_ / "client_ed25519");
  keygen(dir_ / "other_ed25519");
  fs::copy_file(dir_ / "client_ed25519.pub", dir_ / "authorized_keys", fs::copy_options::overwrite_existing);
  // sshd needs its privilege separation directory, as the package's service would make it.
  std::error_code ec;
  fs::create_directories("/run/sshd", ec);
  port_ = free_port();
  std::ofstream(dir_ / "sshd_config")
      << "Port " << port_ << "\nListenAddress 127.0.0.1\nHostKey " << (dir_ / "host_ed25519").string()
      << "\nPidFile " << (dir_ / "sshd.pid").string() << "\nAuthorizedKeysFile "
      << (dir_ / "authorized_keys").string()
      << "\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
         "PermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\nAllowUsers "
      << user_ << "\nPrintMotd no\nLogLevel ERROR\n";
  pid_ = ::fork();
  if (pid_ == 0) {
    const std::string log = (dir_ / "sshd.log").string();
    const std::string config = (dir_ / "sshd_config").string();
    // An absolute argv[0]: sshd re-executes itself for each connection.
    ::execl("/usr/sbin/sshd", "/usr/sbin/sshd", "-D", "-E", log.c_str(), "-f", config.c_str(), nullptr);
    ::_exit(127);
  }
  // Ready when it accepts: the port is its own once it listens.
  for (int i = 0; i < 500 && !accepts(port_); ++i) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_)
      throw std::runtime_error("GitSshServer: sshd exited: " + read(dir_ / "sshd.log"));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

GitSshServer::~GitSshServer() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
}

std::string GitSshServer::url(const fs::path& repository) const {
  return "ssh://" + user_ + "@127.0.0.1:" + std::to_string(port_) + repository.string();
}

std::string GitSshServer::client_private_key() const { return read(dir_ / "client_ed25519"); }

std::string GitSshServer::known_hosts_line() const {
  return "[127.0.0.1]:" + std::to_string(port_) + " " + key_part(read(dir_ / "host_ed25519.pub")) + "\n";
}

std::string GitSshServer::wrong_known_hosts_line() const {
  return "[127.0.0.1]:" + std::to_string(port_) + " " + key_part(read(dir_ / "other_ed25519.pub")) + "\n";
}

}  // namespace takosumi::testing
