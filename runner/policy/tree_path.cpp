#include "runner/policy/tree_path.hpp"

#include <sys/stat.h>

#include <deque>
#include <system_error>
#include <vector>

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;

void push_components(const fs::path& p, std::deque<std::string>& queue, bool front) {
  std::vector<std::string> parts;
  for (const auto& part : p) parts.push_back(part.string());
  if (front)
    queue.insert(queue.begin(), parts.begin(), parts.end());
  else
    queue.insert(queue.end(), parts.begin(), parts.end());
}

fs::path join(const std::vector<std::string>& stack) {
  fs::path out;
  for (const auto& part : stack) out /= part;
  return out;
}

}  // namespace

std::expected<fs::path, std::string> resolve_in_tree(const fs::path& root, const fs::path& from,
                                                     const fs::path& rel) {
  if (rel.is_absolute()) return std::unexpected("is an absolute path");
  std::vector<std::string> stack;  // the physical directories reached so far, below root
  for (const auto& part : from)
    if (!part.empty() && part != ".") stack.push_back(part.string());
  std::deque<std::string> queue;
  push_components(rel, queue, false);
  int hops = 0;
  while (!queue.empty()) {
    const std::string part = std::move(queue.front());
    queue.pop_front();
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (stack.empty()) return std::unexpected("leads outside the checkout");
      stack.pop_back();
      continue;
    }
    const fs::path here = root / join(stack) / part;
    struct stat st {};
    if (::lstat(here.c_str(), &st) != 0)
      return std::unexpected("is dangling (" + (join(stack) / part).generic_string() +
                             " does not exist)");
    if (!S_ISLNK(st.st_mode)) {
      stack.push_back(part);
      continue;
    }
    if (++hops > kMaxLinkHops)
      return std::unexpected("goes through more than " + std::to_string(kMaxLinkHops) + " links");
    std::error_code ec;
    const fs::path target = fs::read_symlink(here, ec);
    if (ec) return std::unexpected("could not be read: " + ec.message());
    if (target.is_absolute())
      return std::unexpected("goes through an absolute link (" +
                             (join(stack) / part).generic_string() + ")");
    push_components(target, queue, true);
  }
  return join(stack);
}

}  // namespace takosumi::runner
