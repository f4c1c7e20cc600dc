#pragma once
// Nothing writable is executable: inside the Run's sandbox, every mount that can be written (the
// workspace, /tmp, /dev/shm, sandbox.writablePaths, …) and every mount at or beneath the listed
// paths becomes noexec. The kernel then refuses to execve a file there and to mmap one with
// PROT_EXEC, so neither a program the module ships or writes nor the dynamic loader
// (`ld.so ./tool`) can run code from it — which Landlock, checking execve paths only, cannot
// promise. Plain POSIX.
//
// The mounts belong to bubblewrap's mount namespace, whose user namespace the sandboxed process is
// not the owner of; so a new mount namespace is made first (CAP_SYS_ADMIN in the sandbox's user
// namespace: bubblewrap's --cap-add), where the copies may be remounted. Locked flags (read-only,
// nosuid, nodev, atime) are kept as they are; noexec is only ever added.
#include <expected>
#include <string>
#include <vector>

namespace takosumi::confine {

struct MountEntry {
  std::string mount_point;   // unescaped
  std::vector<std::string> options;  // the per-mount options ("rw", "nosuid", …)
};

// /proc/self/mountinfo's lines, parsed (octal escapes of the mount point undone).
std::vector<MountEntry> parse_mountinfo(const std::string& text);

// Whether the mount must be noexec: writable, or at or beneath one of `under`.
bool needs_noexec(const MountEntry& mount, const std::vector<std::string>& under);

// Unshares the mount namespace and remounts every mount needs_noexec names with noexec added,
// then checks mountinfo again. The error names the mount and the failed call.
std::expected<void, std::string> make_mounts_noexec(const std::vector<std::string>& under);

}  // namespace takosumi::confine
