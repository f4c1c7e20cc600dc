#include "runner/tofu/tofu_builds.hpp"

#include <sys/stat.h>

#include <algorithm>

#include "common/error_codes.hpp"
#include "protocol/failure_codes.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxEntries = 256;

std::string list_names(const TofuBuildList& list) {
  if (list.builds.empty()) return "none";
  std::string out;
  for (const auto& b : list.builds) out += (out.empty() ? "" : ", ") + b.name;
  return out;
}

}  // namespace

Result<TofuBuildList> list_tofu_builds(const fs::path& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return fail(errc::kIoError, "tofu.versionsDir " + dir.string() + ": " + ec.message());
  TofuBuildList list;
  std::size_t seen = 0;
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (++seen > kMaxEntries) {
      list.skipped.push_back("entries past the first 256 are not read");
      break;
    }
    const std::string name = it->path().filename().string();
    auto version = protocol::parse_tofu_version(name);
    if (!version) {
      list.skipped.push_back(name + ": the name is not a version, such as 1.10.6");
      continue;
    }
    // The operator's directory: links are followed, as for tofu.binary.
    const fs::path binary = it->path() / "tofu";
    struct stat st {};
    if (::stat(binary.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & S_IXUSR) == 0) {
      list.skipped.push_back(name + ": no executable file named tofu in it");
      continue;
    }
    list.builds.push_back({name, std::move(*version), binary});
  }
  if (ec) return fail(errc::kIoError, "tofu.versionsDir " + dir.string() + ": " + ec.message());
  // Newest first; equal versions ("1.10" and "1.10.0") by name, so the choice never depends on
  // the order the directory lists them in.
  std::sort(list.builds.begin(), list.builds.end(), [](const TofuBuild& a, const TofuBuild& b) {
    const int c = protocol::compare(a.version, b.version);
    return c != 0 ? c > 0 : a.name < b.name;
  });
  return list;
}

std::string describe(const std::vector<VersionRequirement>& requirements) {
  std::string out;
  for (const auto& r : requirements)
    out += (out.empty() ? "" : " and ") + r.where + " \"" + r.constraint.text + "\"";
  return out;
}

Result<TofuBuild> select_tofu_build(const TofuBuildList& list,
                                    const std::vector<VersionRequirement>& requirements) {
  for (const auto& build : list.builds)
    if (std::all_of(requirements.begin(), requirements.end(), [&](const VersionRequirement& r) {
          return protocol::satisfies(build.version, r.constraint);
        }))
      return build;
  return fail(errc::kOpentofuVersionUnavailable,
              "no OpenTofu build of this agent's tofu.versionsDir satisfies " +
                  describe(requirements) + "; it has " + list_names(list) +
                  " (add a build there, or change the constraint)");
}

Result<TofuBuild> find_tofu_build(const TofuBuildList& list, std::string_view name) {
  for (const auto& build : list.builds)
    if (build.name == name) return build;
  return fail(errc::kOpentofuVersionUnavailable,
              "the plan was made with the tofu.versionsDir build " + std::string(name) +
                  ", which this agent does not have (it has " + list_names(list) +
                  "); a saved plan applies only with the OpenTofu that made it");
}

}  // namespace takosumi::runner
