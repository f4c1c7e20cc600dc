#include "confine/capabilities.hpp"

#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace takosumi::confine {
namespace {

std::string with_errno(const std::string& what) { return what + ": " + std::strerror(errno); }

int last_capability() {
  std::ifstream in("/proc/sys/kernel/cap_last_cap");
  int last = 0;
  if (in >> last && last > 0) return last;
  return CAP_LAST_CAP;
}

}  // namespace

std::expected<void, std::string> drop_all_capabilities() {
  constexpr unsigned long kLocked = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                                    SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                                    SECBIT_NO_CAP_AMBIENT_RAISE |
                                    SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
  if (::prctl(PR_SET_SECUREBITS, kLocked, 0, 0, 0) != 0)
    return std::unexpected(with_errno("prctl(PR_SET_SECUREBITS)"));
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0)
    return std::unexpected(with_errno("prctl(PR_CAP_AMBIENT_CLEAR_ALL)"));
  for (int cap = 0; cap <= last_capability(); ++cap)
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
      return std::unexpected(with_errno("prctl(PR_CAPBSET_DROP, " + std::to_string(cap) + ")"));
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capset, &header, none) != 0) return std::unexpected(with_errno("capset"));
  __user_cap_data_struct now[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &header, now) != 0) return std::unexpected(with_errno("capget"));
  for (const auto& d : now)
    if (d.effective != 0 || d.permitted != 0 || d.inheritable != 0)
      return std::unexpected("capabilities remain after capset");
  return {};
}

}  // namespace takosumi::confine
