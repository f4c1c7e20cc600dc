#pragma once
// The seccomp filter of every Run (docs/security.md "System calls"): everything a Run needs is
// allowed, and the calls below, which tofu, its providers and the interpreters a policy may allow
// never need, fail with EPERM (clone3 with ENOSYS, so C libraries fall back to clone, whose
// namespace flags are then refused). Foreign system-call ABIs (32-bit calls on x86-64) kill the
// process. Uses libseccomp.
#include <expected>
#include <span>
#include <string>
#include <string_view>

namespace takosumi::confine {

struct DeniedSyscalls {
  std::string_view names;  // space-separated
  std::string_view why;
};

// The refused calls, grouped with the reason (also what docs/security.md lists).
std::span<const DeniedSyscalls> denied_syscalls();

// Loads the filter for the calling thread and everything it executes (sets no_new_privs). Unless
// allow_jit, memory can never be writable and executable at once, nor anonymous and executable,
// nor be made executable later (kWritableCodeRule).
std::expected<void, std::string> load_seccomp_filter(bool allow_jit);

// What the write-xor-execute rules refuse, for docs/security.md and the tests.
inline constexpr std::string_view kWritableCodeRule =
    "mmap with PROT_WRITE|PROT_EXEC or with PROT_EXEC and MAP_ANONYMOUS, mprotect and "
    "pkey_mprotect with PROT_EXEC, shmat with SHM_EXEC";

}  // namespace takosumi::confine
