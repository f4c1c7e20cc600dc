#include "runner/tofu/tofu_builds.hpp"

#include <sys/stat.h>

#include <algorithm>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"
#include "runner/policy/package_hash.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxEntries = 256;
constexpr std::size_t kMaxListed = 4096;  // a directory of more is refused, not half read

}  // namespace

std::string list_names(const TofuBuildList& list) {
  constexpr std::size_t kShown = 16;
  if (list.builds.empty()) return "none";
  std::string out;
  for (std::size_t i = 0; i < list.builds.size() && i < kShown; ++i)
    out += (out.empty() ? "" : ", ") + shown_name(list.builds[i].name);
  if (list.builds.size() > kShown) out += " (and " + std::to_string(list.builds.size() - kShown) + " more)";
  return out;
}

Result<TofuBuildList> list_tofu_builds(const fs::path& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return fail(errc::kIoError, "tofu.versionsDir " + dir.string() + ": " + ec.message());
  // The first names in byte order, whatever order the directory lists them in: an apply looks up
  // its plan's build in the same list its plan chose from.
  std::vector<std::string> names;
  for (; !ec && it != fs::directory_iterator() && names.size() <= kMaxListed; it.increment(ec))
    names.push_back(it->path().filename().string());
  if (ec) return fail(errc::kIoError, "tofu.versionsDir " + dir.string() + ": " + ec.message());
  if (names.size() > kMaxListed)
    return fail(errc::kIoError, "tofu.versionsDir " + dir.string() + " holds more than " +
                                    std::to_string(kMaxListed) + " entries");
  std::sort(names.begin(), names.end());
  TofuBuildList list;
  if (names.size() > kMaxEntries) {
    list.skipped.push_back("the entries after the first 256 by name are not read");
    names.resize(kMaxEntries);
  }
  for (const auto& name : names) {
    auto version = protocol::parse_tofu_version(name);
    if (!version) {
      list.skipped.push_back(shown_name(name) + ": the name is not a version, such as 1.10.6");
      continue;
    }
    // The operator's directory: links are followed, as for tofu.binary.
    const fs::path binary = dir / name / "tofu";
    struct stat st {};
    if (::stat(binary.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & S_IXUSR) == 0) {
      list.skipped.push_back(name + ": no executable file named tofu in it");
      continue;
    }
    list.builds.push_back({name, std::move(*version), binary});
  }
  // Newest first; equal versions ("1.10" and "1.10.0") by name, so the choice never depends on
  // the order the directory lists them in.
  std::sort(list.builds.begin(), list.builds.end(), [](const TofuBuild& a, const TofuBuild& b) {
    const int c = protocol::compare(a.version, b.version);
    return c != 0 ? c > 0 : a.name < b.name;
  });
  return list;
}

// The first four: a module's many constraints make no message too long to report.
std::string describe(const std::vector<VersionRequirement>& requirements) {
  constexpr std::size_t kShown = 4;
  std::string out;
  for (std::size_t i = 0; i < requirements.size() && i < kShown; ++i)
    out += (out.empty() ? "" : " and ") + requirements[i].where + " \"" +
           shown_name(requirements[i].constraint.text) + "\"";
  if (requirements.size() > kShown)
    out += " (and " + std::to_string(requirements.size() - kShown) + " more)";
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
              "the plan was made with the tofu.versionsDir build " + shown_name(name) +
                  ", which this agent does not have (it has " + list_names(list) +
                  "); a saved plan applies only with the OpenTofu that made it");
}

}  // namespace takosumi::runner
