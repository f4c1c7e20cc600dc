#include "bench/e2e/bare_tofu.hpp"

#include <algorithm>
#include <fstream>

#include "bench/e2e/command.hpp"
#include "runner/tofu/tofu_cli.hpp"

namespace takosumi::bench {
namespace {

Status write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return fail("internal", "write " + path.string());
  return {};
}

// The flags the agent passes (runner/tofu/tofu_cli.cpp), so both sides do the same work.
const std::vector<std::string> kInit{"init", "-input=false", "-no-color"};
const std::vector<std::string> kPlan{"plan", "-input=false", "-no-color", "-out=p",
                                     "-detailed-exitcode"};
constexpr int kPlanHasChanges = 2;

}  // namespace

Result<BareTofu> BareTofu::create(std::filesystem::path tofu, std::filesystem::path mirror,
                                  std::filesystem::path root) {
  std::error_code ec;
  std::filesystem::create_directories(root / "home", ec);
  if (!ec) std::filesystem::create_directories(root / "tmp", ec);
  if (ec) return fail("io", "create " + root.string() + "/{home,tmp}: " + ec.message());
  // The agent's own CLI config text: a filesystem_mirror and no direct installation.
  TAKOSUMI_TRY(write_text(root / "tofurc", runner::cli_config_text(mirror)));
  return BareTofu(std::move(tofu), std::move(mirror), std::move(root));
}

std::vector<std::string> BareTofu::environment() const {
  return {"PATH=/usr/local/bin:/usr/bin:/bin",
          "HOME=" + (root_ / "home").string(),
          "TMPDIR=" + (root_ / "tmp").string(),
          "TF_IN_AUTOMATION=1",
          "TF_INPUT=0",
          "TF_CLI_CONFIG_FILE=" + (root_ / "tofurc").string(),
          "CHECKPOINT_DISABLE=1"};
}

Result<std::filesystem::path> BareTofu::fresh_dir(const std::string& module_text) {
  std::string name = "m";  // not "m" + to_string(): g++ 12 warns of a false -Wrestrict on that
  name += std::to_string(next_dir_++);
  const auto dir = root_ / name;
  std::filesystem::create_directories(dir);
  TAKOSUMI_TRY(write_text(dir / "main.tf", module_text));
  return dir;
}

Status BareTofu::tofu(const std::filesystem::path& dir, std::vector<std::string> args,
                      std::vector<int> allowed, const std::string& stdout_name) const {
  const std::string what = "tofu " + args.front() + " in " + dir.string();
  args.insert(args.begin(), tofu_.string());
  auto code = run_command(Command{std::move(args), dir, environment(),
                                  stdout_name.empty() ? std::filesystem::path{} : dir / stdout_name,
                                  dir / "tofu.stderr"});
  if (!code) return std::unexpected(code.error().with_context(what));
  if (std::find(allowed.begin(), allowed.end(), *code) == allowed.end())
    return fail("tofu_failed", what + ": exit " + std::to_string(*code) + " (see tofu.stderr)");
  return {};
}

Status BareTofu::plan(const std::filesystem::path& dir) const {
  TAKOSUMI_TRY(tofu(dir, kInit));
  TAKOSUMI_TRY(tofu(dir, kPlan, {0, kPlanHasChanges}));
  return show_json(dir);
}

Status BareTofu::plan_apply(const std::filesystem::path& dir) const {
  TAKOSUMI_TRY(tofu(dir, kInit));
  TAKOSUMI_TRY(tofu(dir, kPlan, {0, kPlanHasChanges}));
  TAKOSUMI_TRY(tofu(dir, {"apply", "-input=false", "-no-color", "p"}));
  return tofu(dir, {"output", "-json", "-no-color"}, {0}, "outputs.json");
}

Status BareTofu::show_json(const std::filesystem::path& dir) const {
  return tofu(dir, {"show", "-json", "-no-color", "p"}, {0}, "plan.json");
}

Status BareTofu::refresh_only(const std::filesystem::path& dir) const {
  TAKOSUMI_TRY(tofu(dir, kInit));
  return tofu(dir, {"plan", "-refresh-only", "-input=false", "-no-color", "-lock=false",
                    "-detailed-exitcode"},
              {0, kPlanHasChanges});
}

Status BareTofu::plan_parallel(const std::vector<std::filesystem::path>& dirs, int parallelism) const {
  // The same three commands as plan(), as a user would hand them to xargs.
  const auto script = root_ / "plan.sh";
  TAKOSUMI_TRY(write_text(script,
                          "set -e\ncd \"$1\"\n\"$TOFU\" init -input=false -no-color >/dev/null\n"
                          "rc=0; \"$TOFU\" plan -input=false -no-color -out=p -detailed-exitcode "
                          ">/dev/null || rc=$?\n[ $rc -ne 1 ]\n"
                          "\"$TOFU\" show -json -no-color p >plan.json\n"));
  std::string list;
  for (const auto& d : dirs) list += d.string() + "\n";
  TAKOSUMI_TRY(write_text(root_ / "dirs.txt", list));
  auto env = environment();
  env.push_back("TOFU=" + tofu_.string());
  auto code = run_command(Command{{"/bin/sh", "-c",
                                   "xargs -P" + std::to_string(parallelism) + " -n1 /bin/sh " +
                                       script.string() + " < dirs.txt"},
                                  root_, env, {}, root_ / "xargs.stderr"});
  if (!code) return std::unexpected(code.error().with_context("xargs"));
  if (*code != 0) return fail("tofu_failed", "xargs -P" + std::to_string(parallelism) + ": exit " +
                                                 std::to_string(*code));
  return {};
}

}  // namespace takosumi::bench
