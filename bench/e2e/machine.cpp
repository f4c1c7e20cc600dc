#include "bench/e2e/machine.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>
#include <fstream>

#include "bench/e2e/command.hpp"
#include "bench/e2e/report.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::bench {

boost::json::object machine_json() {
  std::string cpu;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; cpu.empty() && std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      cpu = line.substr(line.find(':') + 2);
  long long mem_kib = 0;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string key; meminfo >> key;) {
    if (key == "MemTotal:") {
      meminfo >> mem_kib;
      break;
    }
    meminfo.ignore(1 << 10, '\n');
  }
  utsname u{};
  ::uname(&u);
  return {{"cpu", cpu},
          {"cpus", ::sysconf(_SC_NPROCESSORS_ONLN)},
          {"memMiB", mem_kib / 1024},
          {"kernel", std::string(u.sysname) + " " + u.release}};
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string tofu_version(const std::filesystem::path& tofu) {
  testing::TempDir dir("takosumi-bench-version-");
  auto code = run_command(Command{{tofu.string(), "version", "-json"}, dir.path(),
                                  {"PATH=/usr/bin:/bin", "HOME=" + dir.path().string(), "CHECKPOINT_DISABLE=1"},
                                  dir / "version.json", {}});
  if (!code || *code != 0) return "";
  auto doc = read_json_file(dir / "version.json");
  if (!doc || !doc->is_object() || !doc->as_object().contains("terraform_version")) return "";
  return std::string(doc->at("terraform_version").as_string());
}

}  // namespace takosumi::bench
