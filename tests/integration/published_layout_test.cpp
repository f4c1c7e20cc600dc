// Modules in the layouts their authors publish them in, run through takosumi and by hand with the
// same OpenTofu and provider mirror: an example that calls its ancestor (`source = "../.."`), and
// a vendored copy of a public multi-module example (tests/modules/null-label: cloudposse's
// terraform-null-label with its examples/complete; its registry modules replaced by their upstream
// tags as local paths, since tests have no registry). The Outputs takosumi publishes must equal
// bare `tofu output -json`.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tests/support/probe_module.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every regular file under dir, by its path relative to dir: a repository's tree.
std::map<std::string, std::string> files_under(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file())
      files.emplace(fs::relative(entry.path(), dir).generic_string(), read_file(entry.path()));
  return files;
}

// Bare tofu on the same files: init, apply, output -json in <work>/<module_path>, with the
// binary and the provider mirror the agent uses. Returns each Output's value by name.
json::object bare_tofu_outputs(const fs::path& work, const std::map<std::string, std::string>& files,
                               const std::string& module_path) {
  for (const auto& [name, content] : files) {
    fs::create_directories((work / name).parent_path());
    std::ofstream(work / name, std::ios::binary) << content;
  }
  std::ofstream(work.parent_path() / "bare.tfrc")
      << "provider_installation {\n  filesystem_mirror {\n    path = \""
      << test_paths::provider_mirror << "\"\n  }\n}\n";
  const fs::path module = work / module_path;
  const fs::path log = work.parent_path() / "bare.log";
  const std::string tofu = std::string("'") + test_paths::tofu + "'";
  const std::string command = "cd '" + module.string() + "' && export TF_CLI_CONFIG_FILE='" +
                              (work.parent_path() / "bare.tfrc").string() +
                              "' TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1 && " + tofu +
                              " init -input=false && " + tofu +
                              " apply -auto-approve -input=false && " + tofu +
                              " output -json > ../bare-outputs.json";
  const std::string quiet = "(" + command + ") > '" + log.string() + "' 2>&1";
  EXPECT_EQ(std::system(quiet.c_str()), 0) << read_file(log);
  json::object values;
  const auto parsed = json::parse(read_file(module.parent_path() / "bare-outputs.json"));
  for (const auto& [name, output] : parsed.as_object()) values[name] = output.at("value");
  return values;
}

// An outputAllowlist that publishes every Output of `names` under its own name.
json::object map_all(const json::object& names) {
  json::object allowlist;
  for (const auto& kv : names) allowlist[kv.key()] = json::object{{"from", kv.key()}};
  return allowlist;
}

json::object published_outputs(Stack& stack, const std::string& capsule) {
  auto answer = stack.api().get("/api/v1/capsules/" + capsule + "/outputs");
  EXPECT_EQ(answer.status, 200u) << answer.body;
  return answer.json.at("outputs").as_object();
}

// Plans and applies the module at module_path of `files` through takosumi and by hand, and
// compares the Outputs.
void expect_outputs_equal_bare_tofu(const std::map<std::string, std::string>& files,
                                    const std::string& module_path) {
  Stack stack;
  const auto bare = bare_tofu_outputs(stack.root() / "bare" / "checkout", files, module_path);
  ASSERT_FALSE(bare.empty());
  TestGitRepo repo(stack.root() / "repo");
  repo.commit(files);
  const auto capsule = stack.create_capsule_from(json::object{
      {"name", "published"},
      {"source", json::object{{"gitUrl", repo.url()}, {"ref", "main"}, {"modulePath", module_path}}},
      {"outputAllowlist", map_all(bare)}});
  const auto applied = plan_and_apply(stack, capsule);
  ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied) << run_logs(stack, applied);
  const auto published = published_outputs(stack, capsule);
  EXPECT_EQ(published.size(), bare.size()) << json::serialize(published);
  for (const auto& [name, value] : bare) {
    const auto* got = published.if_contains(name);
    ASSERT_NE(got, nullptr) << name << " is not published: " << json::serialize(published);
    EXPECT_EQ(*got, value) << name;
  }
}

// The two-file repository of every published module's examples: the example calls the module at
// the repository's root, whose tree holds the example (and the agent's own override file there).
TEST(PublishedLayout, AnExampleCallingItsAncestorAppliesAsByHand) {
  expect_outputs_equal_bare_tofu(
      {{"main.tf", "variable \"name\" {\n  type = string\n}\n"
                   "resource \"terraform_data\" \"n\" {\n  input = \"label-${var.name}\"\n}\n"
                   "output \"id\" {\n  value = terraform_data.n.output\n}\n"},
       {"examples/ex/main.tf", "module \"x\" {\n  source = \"../..\"\n  name   = \"ex\"\n}\n"
                               "output \"id\" {\n  value = module.x.id\n}\n"
                               "output \"parts\" {\n  value = {\n    id = module.x.id\n"
                               "    n  = 2\n    on = true\n    l  = [\"a\", \"b\"]\n  }\n}\n"}},
      "examples/ex");
}

TEST(PublishedLayout, NullLabelsCompleteExampleAppliesAsByHand) {
  const auto files = files_under(fs::path(test_paths::source_dir) / "tests/modules/null-label");
  ASSERT_TRUE(files.contains("examples/complete/label1.tf"));
  expect_outputs_equal_bare_tofu(files, "examples/complete");
}

}  // namespace
}  // namespace takosumi::testing
