#pragma once
// The baseline: OpenTofu run by hand in a fresh directory, with the same tofu binary, the same
// CLI configuration (provider_installation with only the agent's filesystem_mirror) and the same
// environment variables the agent gives tofu. No network: the mirror is the only source.
#include <filesystem>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace takosumi::bench {

class BareTofu {
 public:
  // root must exist and is owned by the caller; writes the CLI config there, and every module dir
  // goes under it. Fails when root is not writable.
  static Result<BareTofu> create(std::filesystem::path tofu, std::filesystem::path mirror,
                                 std::filesystem::path root);

  // A new directory holding main.tf = module_text.
  Result<std::filesystem::path> fresh_dir(const std::string& module_text);
  // init, plan -out=p, show -json p.
  Status plan(const std::filesystem::path& dir) const;
  // init, plan -out=p, apply p, output -json.
  Status plan_apply(const std::filesystem::path& dir) const;
  // show -json p into dir/plan.json, in a directory plan or plan_apply used.
  Status show_json(const std::filesystem::path& dir) const;
  // init, plan -refresh-only, in a fresh directory holding the state of one that plan_apply
  // applied: what the agent does for a drift check (a fresh workspace, the prior state restored).
  Status refresh_only(const std::filesystem::path& dir) const;
  // The plan sequence for each dir, four at a time, as `xargs -P4` of a shell script would.
  Status plan_parallel(const std::vector<std::filesystem::path>& dirs, int parallelism) const;

 private:
  // Runs tofu with args in dir; exit codes other than those allowed are an error naming args.
  Status tofu(const std::filesystem::path& dir, std::vector<std::string> args,
              std::vector<int> allowed = {0}, const std::string& stdout_name = "") const;
  std::vector<std::string> environment() const;
  BareTofu(std::filesystem::path tofu, std::filesystem::path mirror, std::filesystem::path root)
      : tofu_(std::move(tofu)), mirror_(std::move(mirror)), root_(std::move(root)) {}

  std::filesystem::path tofu_;
  std::filesystem::path mirror_;
  std::filesystem::path root_;
  int next_dir_ = 0;
};

}  // namespace takosumi::bench
