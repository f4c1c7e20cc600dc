#pragma once
// Physical path resolution confined to one directory tree (a Run's checkout), for the policy scan:
// where a symbolic link really leads, decided the way the kernel decides it, component by
// component, without ever looking outside the tree.
#include <expected>
#include <filesystem>
#include <string>

namespace takosumi::runner {

inline constexpr int kMaxLinkHops = 40;  // the kernel's own limit (ELOOP)

// Resolves rel (relative, generic form) from the directory `from` (physical, relative to root,
// "" for root), following every symbolic link on the way, and returns the physical path relative
// to root ("" for root itself). Fails with a short reason, never following it further, when a
// link is absolute ("an absolute link"), a component does not exist ("dangling"), ".." climbs
// above root ("leads outside"), or more than kMaxLinkHops links are followed. An absolute link
// may resolve inside a sandbox (/proc/self/cwd/...) to something else than it does here, so
// absolute targets are refused whatever they point to. Reads the tree only (lstat, readlink).
std::expected<std::filesystem::path, std::string> resolve_in_tree(const std::filesystem::path& root,
                                                                  const std::filesystem::path& from,
                                                                  const std::filesystem::path& rel);

}  // namespace takosumi::runner
