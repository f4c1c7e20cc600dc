#include "confine/landlock.hpp"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <dirent.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "common/unique_fd.hpp"

namespace takosumi::confine {
namespace {

// Newer than Debian 12's kernel headers; these values are the kernel's stable ABI.
constexpr std::uint64_t kNetBindTcp = 1ULL << 0;     // LANDLOCK_ACCESS_NET_BIND_TCP (ABI 4)
constexpr std::uint64_t kNetConnectTcp = 1ULL << 1;  // LANDLOCK_ACCESS_NET_CONNECT_TCP (ABI 4)
constexpr int kRuleNetPort = 2;                      // LANDLOCK_RULE_NET_PORT (ABI 4)
constexpr std::uint64_t kScopeAbstractUnixSocket = 1ULL << 0;  // LANDLOCK_SCOPE_* (ABI 6)
constexpr std::uint64_t kScopeSignal = 1ULL << 1;

// struct landlock_ruleset_attr as of ABI 6; the kernel takes a shorter prefix from older callers,
// and refuses a longer one it does not know, so its size follows the ABI.
struct RulesetAttr {
  std::uint64_t handled_access_fs = 0;
  std::uint64_t handled_access_net = 0;
  std::uint64_t scoped = 0;
};

struct NetPortAttr {
  std::uint64_t allowed_access = 0;
  std::uint64_t port = 0;
};

std::string with_errno(const std::string& what) { return what + ": " + std::strerror(errno); }

std::size_t ruleset_size(int abi) {
  if (abi >= 6) return sizeof(RulesetAttr);
  if (abi >= 4) return offsetof(RulesetAttr, scoped);
  return offsetof(RulesetAttr, handled_access_net);
}

std::expected<void, std::string> allow_execute(int ruleset, const std::string& path) {
  const UniqueFd fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT || errno == ENOTDIR) return {};
    return std::unexpected(with_errno("open " + path));
  }
  struct landlock_path_beneath_attr rule {};
  rule.allowed_access = LANDLOCK_ACCESS_FS_EXECUTE;
  rule.parent_fd = fd.get();
  if (::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0)
    return std::unexpected(with_errno("allow executing " + path));
  return {};
}

// Opening a file for writing is allowed beneath every top-level directory except the kernel's
// own interfaces: /proc/<pid>/mem writes through page protections (FOLL_FORCE), which would turn
// write-xor-execute into nothing, and /proc and /sys hold no file a Run needs to write. Mount
// options still decide what is writable at all; this only takes the kernel interfaces away.
bool kernel_interface(const char* path) {
  struct statfs fs {};
  if (::statfs(path, &fs) != 0) return false;
  const auto type = static_cast<unsigned long>(fs.f_type);
  return type == PROC_SUPER_MAGIC || type == SYSFS_MAGIC || type == CGROUP_SUPER_MAGIC ||
         type == CGROUP2_SUPER_MAGIC || type == DEBUGFS_MAGIC || type == SECURITYFS_MAGIC ||
         type == BPF_FS_MAGIC || type == TRACEFS_MAGIC;
}

std::expected<void, std::string> allow_writes_outside_kernel_interfaces(int ruleset) {
  DIR* root = ::opendir("/");
  if (root == nullptr) return std::unexpected(with_errno("opendir /"));
  std::expected<void, std::string> result;
  while (const dirent* entry = ::readdir(root)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = "/" + name;
    struct stat st {};
    // Only real directories: a symbolic link at the top names a directory listed on its own, or
    // somewhere beneath one.
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || kernel_interface(path.c_str()))
      continue;
    const UniqueFd fd(::open(path.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) continue;
    struct landlock_path_beneath_attr rule {};
    rule.allowed_access = LANDLOCK_ACCESS_FS_WRITE_FILE;
    rule.parent_fd = fd.get();
    if (::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0) {
      result = std::unexpected(with_errno("allow writing beneath " + path));
      break;
    }
  }
  ::closedir(root);
  return result;
}

std::expected<void, std::string> allow_connect(int ruleset, std::uint16_t port) {
  NetPortAttr rule{kNetConnectTcp, port};
  if (::syscall(SYS_landlock_add_rule, ruleset, kRuleNetPort, &rule, 0) != 0)
    return std::unexpected(with_errno("allow TCP connect to port " + std::to_string(port)));
  return {};
}

RulesetAttr ruleset_for(const LandlockRules& rules, int abi) {
  RulesetAttr attr;
  attr.handled_access_fs = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE;
  if (abi >= 4) {
    attr.handled_access_net = kNetBindTcp;
    if (rules.tcp_connect_ports) attr.handled_access_net |= kNetConnectTcp;
  }
  if (abi >= 6) attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
  return attr;
}

}  // namespace

LandlockSupport probe_landlock() {
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi > 0) return {static_cast<int>(abi), ""};
  if (errno == ENOSYS)
    return {0, "the kernel has no Landlock (it needs Linux 5.13 or later built with "
               "CONFIG_SECURITY_LANDLOCK)"};
  if (errno == EOPNOTSUPP)
    return {0, "Landlock is built into the kernel but not enabled (add landlock to the lsm= "
               "kernel parameter or CONFIG_LSM)"};
  return {0, with_errno("landlock_create_ruleset")};
}

std::string describe_landlock(int abi, bool tcp_ports_restricted) {
  if (abi <= 0) return "none";
  std::string out = "execute allowlist, no writes to /proc or /sys";
  if (abi >= 4) out += tcp_ports_restricted ? ", TCP bind refused, TCP connect by port" : ", TCP bind refused";
  if (abi >= 6) out += ", signals and abstract Unix sockets scoped to the sandbox";
  return out;
}

std::expected<void, std::string> restrict_with_landlock(const LandlockRules& rules, int abi) {
  if (abi < 1) return std::unexpected("no Landlock ABI");
  const RulesetAttr attr = ruleset_for(rules, abi);
  const UniqueFd ruleset(static_cast<int>(
      ::syscall(SYS_landlock_create_ruleset, &attr, ruleset_size(abi), 0)));
  if (!ruleset.valid()) return std::unexpected(with_errno("landlock_create_ruleset"));
  for (const auto& path : rules.executable)
    if (auto added = allow_execute(ruleset.get(), path); !added) return added;
  if (auto added = allow_writes_outside_kernel_interfaces(ruleset.get()); !added) return added;
  if (abi >= 4 && rules.tcp_connect_ports)
    for (const auto port : *rules.tcp_connect_ports)
      if (auto added = allow_connect(ruleset.get(), port); !added) return added;
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return std::unexpected(with_errno("prctl(PR_SET_NO_NEW_PRIVS)"));
  if (::syscall(SYS_landlock_restrict_self, ruleset.get(), 0) != 0)
    return std::unexpected(with_errno("landlock_restrict_self"));
  return {};
}

}  // namespace takosumi::confine
