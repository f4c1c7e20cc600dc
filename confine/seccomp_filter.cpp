#include "confine/seccomp_filter.hpp"

#include <fcntl.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/shm.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>

namespace takosumi::confine {
namespace {

constexpr std::array kDenied{
    DeniedSyscalls{"add_key request_key keyctl",
                   "the kernel keyring outlives the sandbox and is shared beyond its namespaces"},
    DeniedSyscalls{"bpf perf_event_open userfaultfd io_uring_setup io_uring_enter io_uring_register",
                   "large kernel attack surface and exploitation primitives (io_uring also "
                   "bypasses this filter for the calls it makes)"},
    DeniedSyscalls{"init_module finit_module delete_module kexec_load kexec_file_load reboot "
                   "swapon swapoff acct quotactl quotactl_fd syslog vhangup ioperm iopl",
                   "act on the whole machine"},
    DeniedSyscalls{"settimeofday clock_settime clock_adjtime adjtimex",
                   "set the system clock"},
    DeniedSyscalls{"ptrace process_vm_readv process_vm_writev process_madvise pidfd_getfd",
                   "read or change another process (tofu holds the Run's state and credentials)"},
    DeniedSyscalls{"mount umount2 pivot_root chroot move_mount open_tree fsopen fsconfig fsmount "
                   "fspick mount_setattr unshare setns",
                   "change the sandbox's file system or namespaces (also clone with namespace "
                   "flags)"},
    DeniedSyscalls{"name_to_handle_at open_by_handle_at fanotify_init lookup_dcookie nfsservctl "
                   "uselib move_pages migrate_pages sethostname setdomainname",
                   "file handles that bypass path checks, obsolete or machine-wide calls"},
    DeniedSyscalls{"memfd_create memfd_secret",
                   "files that live only in memory: code that never touched a (noexec) file "
                   "system, run with fexecve or mapped by the loader"},
    DeniedSyscalls{"execveat", "with AT_EMPTY_PATH only: executing an open descriptor (fexecve)"},
    DeniedSyscalls{"personality", "only the query is allowed (no ASLR switch-off)"},
    DeniedSyscalls{"ioctl", "TIOCSTI and TIOCLINUX only: pushing input into a terminal"},
};

constexpr std::array<scmp_datum_t, 7> kNamespaceFlags{CLONE_NEWUSER, CLONE_NEWNS,  CLONE_NEWNET,   CLONE_NEWPID,
                                     CLONE_NEWIPC,  CLONE_NEWUTS, CLONE_NEWCGROUP};

struct ContextDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};
using Context = std::unique_ptr<void, ContextDeleter>;

std::string failed(const char* what, int rc) { return std::string(what) + ": " + std::strerror(-rc); }

// Every name of a group the running kernel's architecture knows; unknown names are skipped.
std::expected<void, std::string> deny_plain(scmp_filter_ctx ctx, std::string_view names) {
  while (!names.empty()) {
    const auto end = names.find(' ');
    const std::string name(names.substr(0, end));
    names.remove_prefix(end == std::string_view::npos ? names.size() : end + 1);
    // argument rules below
    if (name == "personality" || name == "ioctl" || name == "execveat") continue;
    const int nr = seccomp_syscall_resolve_name(name.c_str());
    if (nr == __NR_SCMP_ERROR) continue;
    if (int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0); rc < 0)
      return std::unexpected(failed(("seccomp rule for " + name).c_str(), rc));
  }
  return {};
}

std::expected<void, std::string> deny_with_arguments(scmp_filter_ctx ctx) {
  int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  for (const auto flag : kNamespaceFlags)
    if (rc >= 0)
      rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                            SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
  if (rc >= 0)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(personality), 1,
                          SCMP_A0(SCMP_CMP_NE, 0xffffffffULL));
  // The kernel reads the request as a 32-bit number: compare only those bits.
  for (const unsigned long request : {TIOCSTI, TIOCLINUX})
    if (rc >= 0)
      rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                            SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, request));
  if (rc >= 0)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(execveat), 1,
                          SCMP_A4(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH));
  if (rc < 0) return std::unexpected(failed("seccomp argument rule", rc));
  return {};
}

// Write xor execute: no mapping that is writable and executable at once, no executable anonymous
// memory, and no page made executable after the fact. Code then comes only from files, and every
// file a Run can write lies on a noexec mount (confine/noexec_mounts.hpp). Statically linked Go
// (tofu, providers) and the dynamic loader of ordinary programs never need more; JIT runtimes
// (node, java) do, hence sandbox.allowJit.
std::expected<void, std::string> deny_writable_code(scmp_filter_ctx ctx) {
  constexpr scmp_datum_t kWx = PROT_WRITE | PROT_EXEC;
  int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mmap), 1,
                            SCMP_A2(SCMP_CMP_MASKED_EQ, kWx, kWx));
  if (rc >= 0)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mmap), 2,
                          SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC),
                          SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_ANONYMOUS, MAP_ANONYMOUS));
  for (const int call : {SCMP_SYS(mprotect), SCMP_SYS(pkey_mprotect)})
    if (rc >= 0)
      rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), call, 1,
                            SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC));
  // shmat(SHM_EXEC) would map System V shared memory, which a Run can write, executable.
  if (rc >= 0)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(shmat), 1,
                          SCMP_A2(SCMP_CMP_MASKED_EQ, SHM_EXEC, SHM_EXEC));
  if (rc < 0) return std::unexpected(failed("seccomp write-xor-execute rule", rc));
  return {};
}

}  // namespace

std::span<const DeniedSyscalls> denied_syscalls() { return kDenied; }

std::expected<void, std::string> load_seccomp_filter(bool allow_jit) {
  Context ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return std::unexpected("seccomp_init failed");
  for (const auto& group : kDenied)
    if (auto denied = deny_plain(ctx.get(), group.names); !denied) return denied;
  if (auto denied = deny_with_arguments(ctx.get()); !denied) return denied;
  if (!allow_jit)
    if (auto denied = deny_writable_code(ctx.get()); !denied) return denied;
  if (int rc = seccomp_load(ctx.get()); rc < 0) return std::unexpected(failed("seccomp_load", rc));
  return {};
}

}  // namespace takosumi::confine
