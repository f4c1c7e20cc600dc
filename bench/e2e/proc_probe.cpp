#include "bench/e2e/proc_probe.hpp"

#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace takosumi::bench {
namespace {

std::string proc_file(pid_t pid, const char* name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The fields of /proc/<pid>/stat after the command name, which may itself hold spaces.
std::istringstream stat_fields(pid_t pid) {
  const std::string stat = proc_file(pid, "stat");
  const auto close = stat.rfind(')');
  return std::istringstream(close == std::string::npos ? std::string{} : stat.substr(close + 2));
}

}  // namespace

MemoryKib memory_kib(pid_t pid) {
  std::istringstream in(proc_file(pid, "smaps_rollup"));
  MemoryKib m;
  std::int64_t private_clean = -1, private_dirty = -1;
  const auto field = [](const std::string& line, std::string_view name, std::int64_t& into) {
    if (line.rfind(name, 0) == 0) into = std::stoll(line.substr(name.size()));
  };
  for (std::string line; std::getline(in, line);) {
    field(line, "Rss:", m.rss);
    field(line, "Pss:", m.pss);
    field(line, "Private_Clean:", private_clean);
    field(line, "Private_Dirty:", private_dirty);
    field(line, "Anonymous:", m.anon);
  }
  if (private_clean >= 0 && private_dirty >= 0) m.uss = private_clean + private_dirty;
  return m;
}

std::int64_t cpu_ticks(pid_t pid) {
  auto in = stat_fields(pid);
  // Fields 3..15 of stat(5): state, then ten we skip, then utime (14) and stime (15).
  std::string field;
  for (int i = 3; i <= 13; ++i)
    if (!(in >> field)) return -1;
  std::int64_t utime = 0, stime = 0;
  if (!(in >> utime >> stime)) return -1;
  return utime + stime;
}

bool has_exited(pid_t pid) {
  auto in = stat_fields(pid);
  std::string state;
  return !(in >> state) || state == "Z" || state == "X";
}

std::uint64_t bytes_under(const std::filesystem::path& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code size_ec;
    if (it->is_regular_file(size_ec)) total += it->file_size(size_ec);
  }
  return total;
}

}  // namespace takosumi::bench
