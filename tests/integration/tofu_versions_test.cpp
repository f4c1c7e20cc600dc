// tofu.versionsDir with the real agent and OpenTofu. CI builds one OpenTofu version, so the
// directory holds that one build under two names: its own version, and 1.99.0. Selection reads
// names; the Run then asks the chosen build what it is, so a constraint only the name satisfies
// fails, as it must.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <list>
#include <sstream>

#include "tests/support/child_process.hpp"
#include "tests/support/stack.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_git_repo.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;

constexpr const char* kFakeName = "1.99.0";

std::string module_requiring(const std::string& constraint) {
  return "terraform {\n  required_version = \"" + constraint +
         "\"\n}\nresource \"terraform_data\" \"x\" {}\noutput \"n\" {\n  value = 1\n}\n";
}

// What the CI's OpenTofu build says it is.
std::string real_version(const fs::path& dir) {
  const auto out = dir / "version.json";
  const std::string command =
      std::string("TF_CLI_CONFIG_FILE=/dev/null '") + test_paths::tofu + "' version -json > '" +
      out.string() + "'";
  EXPECT_EQ(std::system(command.c_str()), 0);
  std::ifstream in(out);
  std::stringstream s;
  s << in.rdbuf();
  return json::value_to<std::string>(json::parse(s.str()).at("terraform_version"));
}

// <dir>/<real>/tofu and <dir>/1.99.0/tofu, both the one build (hard links where the file system
// allows, copies elsewhere), and a name that is no version, which is skipped.
struct VersionsDir {
  VersionsDir() : real(real_version(dir.path())) {
    for (const std::string& name : {real, std::string(kFakeName)}) {
      fs::create_directories(path() / name);
      std::error_code ec;
      fs::create_hard_link(test_paths::tofu, path() / name / "tofu", ec);
      if (ec) fs::copy_file(test_paths::tofu, path() / name / "tofu");
    }
    fs::create_directories(path() / "latest");
  }
  fs::path path() const { return dir.path() / "versions"; }
  TempDir dir;
  std::string real;
};

class TofuVersions : public ::testing::Test {
 protected:
  static StackOptions options(const VersionsDir& v) {
    StackOptions o;
    o.tofu_versions_dir = v.path();
    return o;
  }
  std::string capsule(const std::string& module, const json::value& opentofu_version = nullptr) {
    TestGitRepo& repo = repos_.emplace_back(stack_.root() / ("repo" + std::to_string(repos_.size())));
    repo.commit({{"main.tf", module}});
    json::object body{
        {"name", "v" + std::to_string(repos_.size())},
        {"source", json::object{{"gitUrl", repo.url()}, {"ref", "main"}, {"modulePath", ""}}},
        {"outputAllowlist", json::object{{"n", json::object{{"from", "n"}, {"type", "number"}}}}}};
    if (!opentofu_version.is_null()) body["opentofuVersion"] = opentofu_version;
    return stack_.create_capsule_from(body);
  }
  std::string logs(const json::object& run) {
    return stack_.api().get("/api/v1/runs/" + str(run, "id") + "/logs").body;
  }

  VersionsDir versions_;
  Stack stack_{options(versions_)};
  std::list<TestGitRepo> repos_;
};

TEST_F(TofuVersions, TheNewestBuildSatisfyingTheModuleIsUsedAndRecorded) {
  const auto id = capsule(module_requiring(">= 1.6.0"));
  auto plan = stack_.plan(id);
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan) << stack_.agent_logs();
  EXPECT_EQ(str(plan, "tofuBuild"), kFakeName) << json::serialize(plan);
  EXPECT_EQ(str(plan, "tofuVersion"), versions_.real) << "what the build itself said";
  const std::string log = logs(plan);
  EXPECT_NE(log.find("OpenTofu 1.99.0 of tofu.versionsDir, for main.tf:2: required_version"),
            std::string::npos) << log;
  EXPECT_NE(log.find("says it is OpenTofu " + versions_.real), std::string::npos)
      << "a directory named for another version is pointed out: " << log;
  // The apply of that plan runs the build that made it.
  auto apply = stack_.apply(str(plan, "id"));
  ASSERT_EQ(str(apply, "status"), "succeeded") << json::serialize(apply) << stack_.agent_logs();
  EXPECT_EQ(str(apply, "tofuBuild"), kFakeName);
}

TEST_F(TofuVersions, TheCapsulesOpentofuVersionNarrowsTheChoiceAndCanBeChanged) {
  const auto id = capsule(module_requiring(">= 1.6.0"), json::value("< 1.50"));
  auto first = stack_.plan(id);
  ASSERT_EQ(str(first, "status"), "succeeded") << json::serialize(first) << stack_.agent_logs();
  EXPECT_EQ(str(first, "tofuBuild"), versions_.real);
  EXPECT_EQ(logs(first).find("says it is"), std::string::npos) << "the name is the build's version";

  auto put = stack_.api().put("/api/v1/capsules/" + id + "/opentofu-version",
                              json::object{{"opentofuVersion", nullptr}});
  ASSERT_EQ(put.status, 200u) << put.body;
  // The plan made before the change is applied by the build that made it: OpenTofu applies a
  // saved plan only with its own version.
  auto apply = stack_.apply(str(first, "id"));
  ASSERT_EQ(str(apply, "status"), "succeeded") << json::serialize(apply) << stack_.agent_logs();
  EXPECT_EQ(str(apply, "tofuBuild"), versions_.real);
  EXPECT_NE(logs(apply).find("OpenTofu " + versions_.real + " of tofu.versionsDir, as for the plan"),
            std::string::npos) << logs(apply);
  auto second = stack_.plan(id);
  ASSERT_EQ(str(second, "status"), "succeeded") << json::serialize(second);
  EXPECT_EQ(str(second, "tofuBuild"), kFakeName) << "only the module's constraint is left";
}

TEST_F(TofuVersions, NoBuildSatisfyingFailsBeforeAnyTofuRunsAndSaysWhatThereIs) {
  const auto id = capsule(module_requiring("~> 2.0"));
  auto plan = stack_.plan(id);
  EXPECT_EQ(str(plan, "status"), "failed") << json::serialize(plan);
  EXPECT_EQ(failure_code(plan), "opentofu_version_unavailable") << json::serialize(plan);
  const std::string message = str(plan.at("failure").as_object(), "message");
  EXPECT_NE(message.find("main.tf:2: required_version \"~> 2.0\""), std::string::npos) << message;
  EXPECT_NE(message.find("it has 1.99.0, " + versions_.real), std::string::npos) << message;
  EXPECT_EQ(message.find(versions_.path().string()), std::string::npos) << message;
  EXPECT_EQ(logs(plan).find("Initializing"), std::string::npos) << "no init ran";
}

TEST_F(TofuVersions, AnApplyWhosePlansBuildIsGoneFailsBeforeAnyTofuRuns) {
  const auto id = capsule(module_requiring(">= 1.6.0"));
  auto plan = stack_.plan(id);
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan) << stack_.agent_logs();
  ASSERT_EQ(str(plan, "tofuBuild"), kFakeName);
  fs::remove_all(versions_.path() / kFakeName);
  auto apply = stack_.apply(str(plan, "id"));
  EXPECT_EQ(str(apply, "status"), "failed") << json::serialize(apply);
  EXPECT_EQ(failure_code(apply), "opentofu_version_unavailable") << json::serialize(apply);
  const std::string message = str(apply.at("failure").as_object(), "message");
  EXPECT_NE(message.find("the plan was made with the tofu.versionsDir build 1.99.0, which this "
                         "agent does not have (it has " + versions_.real + ")"),
            std::string::npos) << message;
  EXPECT_TRUE(stack_.state_versions(id).empty()) << "nothing was applied";
}

TEST_F(TofuVersions, ABuildWhoseOwnVersionDoesNotSatisfyIsRefused) {
  // The name 1.99.0 satisfies the Capsule's constraint; the build, asked, says it is not.
  const auto id = capsule(module_requiring(">= 1.6.0"), json::value("~> 1.99.0"));
  auto plan = stack_.plan(id);
  EXPECT_EQ(str(plan, "status"), "failed") << json::serialize(plan);
  EXPECT_EQ(failure_code(plan), "opentofu_version_unavailable") << json::serialize(plan);
  const std::string message = str(plan.at("failure").as_object(), "message");
  EXPECT_NE(message.find("the tofu.versionsDir build 1.99.0 is OpenTofu " + versions_.real +
                         ", which does not satisfy the Capsule's opentofuVersion \"~> 1.99.0\""),
            std::string::npos) << message;
}

TEST_F(TofuVersions, WithoutAConstraintTofuBinaryRuns) {
  const auto id = capsule("resource \"terraform_data\" \"x\" {}\noutput \"n\" {\n  value = 1\n}\n");
  auto plan = stack_.plan(id);
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan) << stack_.agent_logs();
  EXPECT_TRUE(plan.at("tofuBuild").is_null()) << json::serialize(plan);
  EXPECT_EQ(str(plan, "tofuVersion"), versions_.real);

  // --check-config (the unit's ExecStartPre) lists the builds and what it skipped.
  ChildProcess check({(fs::path(test_paths::binary_dir) / "agent/takosumi-agent").string(),
                      "--config", stack_.agent_config(0).string(), "--check-config"},
                     {}, stack_.root() / "check-config.log");
  EXPECT_EQ(check.wait(std::chrono::seconds(60)), 0) << read_text(check.log_file());
  const std::string out = read_text(check.log_file());
  EXPECT_NE(out.find("OpenTofu builds (tofu.versionsDir, for Runs with a version constraint): "
                     "1.99.0, " + versions_.real),
            std::string::npos) << out;
  EXPECT_NE(out.find("tofu.versionsDir: skipped latest: the name is not a version"),
            std::string::npos) << out;
}

TEST(TofuVersionsWithoutDir, ACapsuleConstraintTofuBinaryCannotMeetFailsClearly) {
  Stack stack;
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", "resource \"terraform_data\" \"x\" {}\n"}});
  const auto id = stack.create_capsule_from(json::object{
      {"name", "pinned"},
      {"source", json::object{{"gitUrl", repo.url()}, {"ref", "main"}, {"modulePath", ""}}},
      {"outputAllowlist", json::object{}},
      {"opentofuVersion", "~> 2.0"}});
  auto plan = stack.plan(id);
  EXPECT_EQ(str(plan, "status"), "failed") << json::serialize(plan);
  EXPECT_EQ(failure_code(plan), "opentofu_version_unavailable") << json::serialize(plan);
  const std::string message = str(plan.at("failure").as_object(), "message");
  EXPECT_NE(message.find("tofu.binary is OpenTofu"), std::string::npos) << message;
  EXPECT_NE(message.find("this agent has no tofu.versionsDir"), std::string::npos) << message;
}

}  // namespace
}  // namespace takosumi::testing
