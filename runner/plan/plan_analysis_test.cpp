#include "runner/plan/plan_analysis.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <fstream>

#include "runner/tofu/boost_process_launcher.hpp"
#include "tests/support/run_to_end.hpp"
#include "runner/state/state_file.hpp"
#include "runner/tofu/tofu_cli.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::runner {
namespace {

using Actions = std::vector<std::string>;
using takosumi::testing::TempDir;

std::string plan_with(const std::string& changes, const std::string& outputs = "{}") {
  return R"({"format_version":"1.2","terraform_version":"1.12.6","future_key":{"x":1},
             "planned_values":{},"resource_changes":[)" +
         changes + R"(],"output_changes":)" + outputs + "}";
}

std::string change(const std::string& address, const std::string& type, const std::string& actions) {
  return R"({"address":")" + address + R"(","mode":"managed","type":")" + type +
         R"(","name":"n","provider_name":"p","change":{"actions":)" + actions +
         R"(,"before":null,"after":{},"after_unknown":{}},"action_reason":"replace_because_cannot_update"})";
}

TEST(PlanAnalysis, CountsEachKindOfChange) {
  auto r = analyze_plan(plan_with(
      change("terraform_data.new", "terraform_data", R"(["create"])") + "," +
      change("local_file.edit", "local_file", R"(["update"])") + "," +
      change("local_file.gone", "local_file", R"(["delete"])") + "," +
      change("aws_db_instance.db", "aws_db_instance", R"(["delete","create"])") + "," +
      change("aws_s3_bucket.b", "aws_s3_bucket", R"(["create","delete"])") + "," +
      change("terraform_data.same", "terraform_data", R"(["no-op"])") + "," +
      change("data.local_file.r", "local_file", R"(["read"])")));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->has_changes);
  EXPECT_EQ(r->summary.add, 1);
  EXPECT_EQ(r->summary.change, 1);
  EXPECT_EQ(r->summary.destroy, 1);
  EXPECT_EQ(r->summary.replace, 2);
  ASSERT_EQ(r->resource_changes.size(), 5u);  // no-op and read left out
  const auto& create = r->resource_changes[0];
  EXPECT_EQ(create.address, "terraform_data.new");
  EXPECT_EQ(create.type, "terraform_data");
  EXPECT_FALSE(create.is_delete);
  EXPECT_FALSE(create.is_replace);
  EXPECT_FALSE(r->resource_changes[1].is_delete);
  EXPECT_TRUE(r->resource_changes[2].is_delete);
  EXPECT_FALSE(r->resource_changes[2].is_replace);
  for (int i : {3, 4}) {
    EXPECT_TRUE(r->resource_changes[i].is_delete) << i;
    EXPECT_TRUE(r->resource_changes[i].is_replace) << i;
  }
  EXPECT_EQ(r->resource_changes[3].actions, (Actions{"delete", "create"}));
  EXPECT_EQ(r->resource_changes[4].actions, (Actions{"create", "delete"}));
  EXPECT_EQ(r->action_reasons.size(), 5u);
  EXPECT_EQ(r->action_reasons.at("aws_db_instance.db"), "replace_because_cannot_update");
}

TEST(PlanAnalysis, NoOpPlanHasNoChanges) {
  auto r = analyze_plan(plan_with(change("terraform_data.a", "terraform_data", R"(["no-op"])"),
                                  R"({"o":{"actions":["no-op"],"before_sensitive":false}})"));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_FALSE(r->has_changes);
  EXPECT_TRUE(r->resource_changes.empty());
  EXPECT_EQ(r->summary.add + r->summary.change + r->summary.destroy + r->summary.replace, 0);
}

TEST(PlanAnalysis, OutputChangeAloneIsAChange) {
  auto r = analyze_plan(plan_with("", R"({"o":{"actions":["update"],"after_sensitive":true}})"));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->has_changes);
  EXPECT_TRUE(r->resource_changes.empty());
}

TEST(PlanAnalysis, EmptyPlanWithoutListsHasNoChanges) {
  auto r = analyze_plan(R"({"format_version":"1.0"})");
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_FALSE(r->has_changes);
}

TEST(PlanAnalysis, RefusesOtherFormatsAndGarbage) {
  for (const char* bad : {R"({"format_version":"2.0","resource_changes":[]})", "{}", "not json",
                          R"({"format_version":"1.2","resource_changes":[{"address":"a"}]})",
                          R"({"format_version":"1.2","resource_changes":[{"address":"a","change":{"actions":[1]}}]})"}) {
    auto r = analyze_plan(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, "opentofu_failed") << bad;
  }
}

// Real OpenTofu: create, then update + replace + delete against the applied state.
class RealPlanAnalysis : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(test_paths::tofu)) << "missing " << test_paths::tofu;
    ASSERT_TRUE(std::filesystem::exists(test_paths::provider_mirror))
        << "missing " << test_paths::provider_mirror;
    auto ws = RunWorkspace::create(tmp_.path() / "work", "plan-analysis", 1);
    ASSERT_TRUE(ws) << ws.error().to_string();
    ws_.emplace(std::move(*ws));
    module_ = ws_->source() / "module";  // the agent writes its files only inside the checkout
    std::filesystem::create_directories(module_);
    TofuOptions options{test_paths::tofu, test_paths::provider_mirror,
                        std::chrono::steady_clock::now() + std::chrono::minutes(5)};
    tofu_.emplace(launcher_, cancel_, options, *ws_, module_, [](std::string_view) {});
    ASSERT_TRUE(tofu_->write_cli_config());
  }
  void write_config(const std::string& text) { std::ofstream(module_ / "main.tf") << text; }
  template <class T>
  T run(boost::asio::awaitable<T> task) {
    return testing::run_to_end(io_, std::move(task));
  }

  TempDir tmp_;
  boost::asio::io_context io_;
  BoostProcessLauncher launcher_;
  CancelSignal cancel_;
  std::optional<RunWorkspace> ws_;
  std::filesystem::path module_;
  std::optional<TofuCli> tofu_;
};

TEST_F(RealPlanAnalysis, ReadsWhatOpenTofuPlans) {
  write_config(R"(
resource "terraform_data" "kept" { input = "v1" }
resource "terraform_data" "doomed" { input = "x" }
resource "local_file" "f" {
  filename = "${path.module}/out.txt"
  content  = "one"
})");
  const auto plan = ws_->plan_file();
  ASSERT_TRUE(run(tofu_->async_init()));
  auto changed = run(tofu_->async_plan(plan));
  ASSERT_TRUE(changed) << changed.error().to_string();
  EXPECT_TRUE(*changed);
  auto json = run(tofu_->async_show_json(plan));
  ASSERT_TRUE(json) << json.error().to_string();
  auto first = analyze_plan(*json);
  ASSERT_TRUE(first) << first.error().to_string();
  EXPECT_EQ(first->summary.add, 3);
  EXPECT_TRUE(first->has_changes);
  ASSERT_TRUE(run(tofu_->async_apply(plan)));

  write_config(R"(
resource "terraform_data" "kept" { input = "v2" }
resource "local_file" "f" {
  filename = "${path.module}/out.txt"
  content  = "two"
})");
  ASSERT_TRUE(run(tofu_->async_plan(plan)));
  json = run(tofu_->async_show_json(plan));
  ASSERT_TRUE(json) << json.error().to_string();
  auto second = analyze_plan(*json);
  ASSERT_TRUE(second) << second.error().to_string();
  EXPECT_EQ(second->summary.add, 0);
  EXPECT_EQ(second->summary.change, 1);
  EXPECT_EQ(second->summary.destroy, 1);
  EXPECT_EQ(second->summary.replace, 1);
  std::map<std::string, protocol::ResourceChange> by_address;
  for (const auto& c : second->resource_changes) by_address[c.address] = c;
  EXPECT_EQ(by_address["terraform_data.kept"].actions, (Actions{"update"}));
  EXPECT_TRUE(by_address["terraform_data.doomed"].is_delete);
  EXPECT_FALSE(by_address["terraform_data.doomed"].is_replace);
  EXPECT_TRUE(by_address["local_file.f"].is_replace);
  EXPECT_EQ(second->action_reasons.at("terraform_data.doomed"), "delete_because_no_resource_config");
  EXPECT_EQ(by_address["local_file.f"].type, "local_file");

  // Nothing left to do: exit code 0 and no changes.
  ASSERT_TRUE(run(tofu_->async_apply(plan)));
  auto none = run(tofu_->async_plan(plan));
  ASSERT_TRUE(none) << none.error().to_string();
  EXPECT_FALSE(*none);
  json = run(tofu_->async_show_json(plan));
  ASSERT_TRUE(json);
  auto third = analyze_plan(*json);
  ASSERT_TRUE(third);
  EXPECT_FALSE(third->has_changes);
}

// The agent publishes Outputs from the new state instead of running `tofu output -json`: both must
// say the same, sensitive flags and types included.
TEST_F(RealPlanAnalysis, StateOutputsAreWhatTofuOutputPrints) {
  write_config(R"(
resource "terraform_data" "d" { input = { a = 1 } }
output "text"   { value = "hello" }
output "number" { value = 42.5 }
output "flag"   { value = true }
output "list"   { value = ["a", "b"] }
output "map"    { value = { k = "v", n = 1 } }
output "object" { value = terraform_data.d.output }
output "secret" {
  value     = "hidden-value"
  sensitive = true
}
output "nothing" { value = null }
)");
  const auto plan = ws_->plan_file();
  ASSERT_TRUE(run(tofu_->async_init()));
  ASSERT_TRUE(run(tofu_->async_plan(plan)));
  ASSERT_TRUE(run(tofu_->async_apply(plan)));
  const auto printed = tmp_.path() / "output.json";
  const std::string cmd = "cd '" + module_.string() + "' && TF_CLI_CONFIG_FILE='" +
                          ws_->cli_config().string() + "' '" + test_paths::tofu +
                          "' output -json > '" + printed.string() + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  auto read_json = [](const std::filesystem::path& p) {
    std::ifstream in(p);
    return boost::json::parse(std::string((std::istreambuf_iterator<char>(in)), {}));
  };
  const auto expected = read_json(printed);
  const auto state = read_json(module_ / "terraform.tfstate");
  EXPECT_EQ(boost::json::value(state_outputs(state.as_object())), expected)
      << boost::json::serialize(state_outputs(state.as_object())) << "\n" << boost::json::serialize(expected);
  EXPECT_TRUE(expected.as_object().at("secret").as_object().at("sensitive").as_bool());
}

}  // namespace
}  // namespace takosumi::runner
