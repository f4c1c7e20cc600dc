// Offline Runs across an air gap (docs/air-gapped.md) with the real binaries and OpenTofu: an
// offline agent, registered from its exported keys, whose configuration names no control plane,
// runs a plan → apply → drift-check cycle carried as Run bundles by the takosumi CLI; each result
// is imported and recorded as an online completion would be. Then what must be refused is: a
// bundle for another agent, a result with a flipped byte, a result replayed, a result whose prior
// generation is stale (kept, not lost).
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/stack.hpp"
#include "tests/support/test_git_repo.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Ran {
  int code = -1;
  std::string out;
};

class OfflineBundleTest : public ::testing::Test {
 protected:
  static StackOptions options() {
    StackOptions o;
    o.agents = 0;  // nothing claims: every Run goes through a bundle
    return o;
  }

  // env: the CLI's control plane and token; none for the offline agent, which has no network.
  Ran run(std::vector<std::string> argv, const std::string& log_name,
          std::map<std::string, std::string> env = {}) {
    const fs::path log = stack_.root() / (log_name + ".log");
    fs::remove(log);
    env["HOME"] = stack_.root().string();
    ChildProcess p(std::move(argv), std::move(env), log);
    Ran r;
    r.code = p.wait(std::chrono::seconds(600));
    r.out = slurp(log);
    return r;
  }
  Ran cli(std::vector<std::string> args, const std::string& log_name) {
    args.insert(args.begin(), (fs::path(TAKOSUMI_TEST_BINARY_DIR) / "cli/takosumi").string());
    return run(std::move(args), log_name,
               {{"TAKOSUMI_DEPLOY_CONTROL_URL", "http://127.0.0.1:" + std::to_string(stack_.port())},
                {"TAKOSUMI_DEPLOY_CONTROL_TOKEN", "test-api-token-0123456789"}});
  }
  // takosumi-agent of the offline agent-<index> (its configuration has no control plane).
  Ran agent(int index, std::vector<std::string> args, const std::string& log_name) {
    args.insert(args.begin(), {(fs::path(TAKOSUMI_TEST_BINARY_DIR) / "agent/takosumi-agent").string(),
                               "--config", stack_.offline_agent_config(index).string()});
    return run(std::move(args), log_name);
  }

  // An offline pool with offline agent-<index> registered from its exported keys; its id.
  std::string register_offline_agent(int index) {
    if (!pool_made_) {
      auto pool = stack_.api().post("/api/v1/agent-pools",
                                    json::object{{"name", "site-a"},
                                                 {"workspaces", json::array{"*"}},
                                                 {"offline", true}});
      EXPECT_EQ(pool.status, 201u) << pool.body;
      pool_made_ = true;
    }
    auto keys = agent(index, {"keys", "export"}, "keys-" + std::to_string(index));
    EXPECT_EQ(keys.code, 0) << keys.out;
    const fs::path file = stack_.root() / ("keys-" + std::to_string(index) + ".json");
    std::ofstream(file) << keys.out;
    auto reg = cli({"--output", "json", "agents", "register-offline", file.string(), "--pool", "site-a"},
                   "register-" + std::to_string(index));
    EXPECT_EQ(reg.code, 0) << reg.out;
    return str(json::parse(keys.out).as_object(), "agentId");
  }

  std::string make_capsule() {
    fs::create_directories(out_dir());
    repo_ = std::make_unique<TestGitRepo>(stack_.root() / "repo");
    repo_->commit({{"main.tf", example_module("offline")}});
    return stack_.create_capsule_from(json::object{
        {"name", "site-app"},
        {"source", json::object{{"gitUrl", repo_->url()}, {"ref", "main"}, {"modulePath", ""}}},
        {"variables", json::object{{"out_dir", out_dir().string()}}},
        {"outputAllowlist",
         json::object{{"endpoint", json::object{{"from", "endpoint"}, {"type", "string"}}},
                      {"dbPassword", json::object{{"from", "db_password"}, {"type", "string"}}}}},
        {"agentPool", "site-a"}});
  }
  fs::path out_dir() const { return stack_.real_world() / "site"; }
  fs::path file(const std::string& name) const { return stack_.root() / name; }

  // One Run across the gap: exported for the agent, executed there, its result imported. Returns
  // the import's answer (JSON), and leaves the result file as <name>.result.
  json::object carry(const std::string& run_id, const std::string& agent_id, const std::string& name,
                     int agent_index = 0) {
    auto exported = cli({"run-bundle", "export", run_id, "--agent", agent_id, "--out",
                         file(name + ".bundle").string()},
                        "export-" + name);
    EXPECT_EQ(exported.code, 0) << exported.out;
    auto executed = agent(agent_index, {"run-bundle", "execute", file(name + ".bundle").string(),
                                        "--out", file(name + ".result").string()},
                          "execute-" + name);
    EXPECT_EQ(executed.code, 0) << executed.out;
    auto imported = cli({"--output", "json", "run-bundle", "import", file(name + ".result").string()},
                        "import-" + name);
    EXPECT_EQ(imported.code, 0) << imported.out;
    auto parsed = json::parse(imported.out.substr(imported.out.find('{')));
    return parsed.as_object();
  }

  std::string queue(const std::string& target, const json::object& body = {}) {
    auto r = stack_.api().post(target, body);
    EXPECT_EQ(r.status, 201u) << r.body;
    return r.json.is_object() ? str(r.json.as_object(), "id") : "";
  }
  json::object get_run(const std::string& id) {
    return stack_.api().get("/api/v1/runs/" + id).json.as_object();
  }

  Stack stack_{options()};
  std::unique_ptr<TestGitRepo> repo_;
  bool pool_made_ = false;
};

TEST_F(OfflineBundleTest, PlanApplyAndDriftCheckCrossTheGapAsBundles) {
  const std::string agent_id = register_offline_agent(0);
  ASSERT_EQ(agent_id.rfind("agt_", 0), 0u) << agent_id;
  const auto capsule = make_capsule();

  const auto plan_id = queue("/api/v1/capsules/" + capsule + "/plan");
  auto plan = carry(plan_id, agent_id, "plan");
  EXPECT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan);
  auto plan_run = get_run(plan_id);
  ASSERT_EQ(str(plan_run, "status"), "succeeded") << json::serialize(plan_run);
  EXPECT_EQ(plan_run.at("hasChanges"), json::value(true));
  // Nothing of the plan touched the site's world; the logs came back with the result.
  EXPECT_FALSE(fs::exists(out_dir() / "app.conf"));
  auto logs = stack_.api().get("/api/v1/runs/" + plan_id + "/logs").body;
  EXPECT_NE(logs.find("random_password.db"), std::string::npos) << logs;

  // Reviewed, then applied across the gap: the apply bundle carries the reviewed plan.
  auto apply_answer = stack_.post_apply(plan_id, false);
  ASSERT_EQ(apply_answer.status, 201u) << apply_answer.body;
  const auto apply_id = str(apply_answer.json.as_object(), "id");
  auto applied = carry(apply_id, agent_id, "apply");
  EXPECT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied);
  EXPECT_FALSE(str(applied, "stateVersionId").empty()) << json::serialize(applied);
  EXPECT_TRUE(fs::exists(out_dir() / "app.conf"));
  auto versions = stack_.state_versions(capsule);
  ASSERT_EQ(versions.size(), 1u);
  auto outputs = stack_.api().get("/api/v1/capsules/" + capsule + "/outputs");
  EXPECT_NE(outputs.body.find("file://"), std::string::npos) << outputs.body;
  const std::string password = slurp(out_dir() / "db.password");
  ASSERT_FALSE(password.empty());
  EXPECT_EQ(outputs.body.find(password), std::string::npos);
  // The secret nowhere the control plane shows, nor in the result files carried back.
  EXPECT_EQ(stack_.public_surface({capsule}, {}).find(password), std::string::npos);
  EXPECT_EQ(slurp(file("apply.result")).find(password), std::string::npos);
  EXPECT_EQ(slurp(file("plan.result")).find(password), std::string::npos);

  // A read-only drift check the same way: nothing drifted.
  const auto drift_id = queue("/api/v1/capsules/" + capsule + "/drift-check");
  auto drift = carry(drift_id, agent_id, "drift");
  EXPECT_EQ(str(drift, "status"), "succeeded") << json::serialize(drift);
  EXPECT_EQ(stack_.state_versions(capsule).size(), 1u);

  // The same result imported again changes nothing.
  auto again = cli({"--output", "json", "run-bundle", "import", file("apply.result").string()},
                   "import-again");
  EXPECT_EQ(again.code, 0) << again.out;
  EXPECT_NE(again.out.find("\"imported\":false"), std::string::npos) << again.out;
  EXPECT_EQ(stack_.state_versions(capsule).size(), 1u);
}

TEST_F(OfflineBundleTest, ForeignTamperedAndStaleBundlesAreRefused) {
  const std::string agent_id = register_offline_agent(0);
  register_offline_agent(1);
  const auto capsule = make_capsule();
  const auto plan_id = queue("/api/v1/capsules/" + capsule + "/plan");
  auto exported = cli({"run-bundle", "export", plan_id, "--agent", agent_id, "--out",
                       file("plan.bundle").string()},
                      "export");
  ASSERT_EQ(exported.code, 0) << exported.out;
  // Exported once: a second export of the same Run is refused while the first is out.
  auto twice = cli({"run-bundle", "export", plan_id, "--agent", agent_id, "--out",
                    file("plan2.bundle").string()},
                   "export-twice");
  EXPECT_EQ(twice.code, 5) << twice.out;

  // Another agent's keys cannot run it.
  auto foreign = agent(1, {"run-bundle", "execute", file("plan.bundle").string(), "--out",
                           file("foreign.result").string()},
                       "foreign");
  EXPECT_EQ(foreign.code, 1) << foreign.out;
  EXPECT_NE(foreign.out.find("manifest_wrong_agent"), std::string::npos) << foreign.out;
  EXPECT_FALSE(fs::exists(file("foreign.result")));

  auto executed = agent(0, {"run-bundle", "execute", file("plan.bundle").string(), "--out",
                            file("plan.result").string()},
                        "execute");
  ASSERT_EQ(executed.code, 0) << executed.out;

  // One byte of the result flipped: refused, nothing recorded.
  {
    fs::copy_file(file("plan.result"), file("flipped.result"));
    std::fstream f(file("flipped.result"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-10, std::ios::end);
    char c = 0;
    f.get(c);
    f.seekp(-10, std::ios::end);
    f.put(static_cast<char>(c ^ 1));
  }
  auto flipped = cli({"run-bundle", "import", file("flipped.result").string()}, "import-flipped");
  EXPECT_EQ(flipped.code, 5) << flipped.out;
  EXPECT_NE(flipped.out.find("bundle_invalid"), std::string::npos) << flipped.out;
  EXPECT_EQ(str(get_run(plan_id), "status"), "running");
  // The index's signature covers every member's digest: an index edited to match is refused too.
  {
    std::string bytes = slurp(file("plan.result"));
    const auto at = bytes.find("\"attempt\\\":1");
    ASSERT_NE(at, std::string::npos);
    bytes[at + 11] = '2';
    std::ofstream(file("forged.result"), std::ios::binary) << bytes;
  }
  auto forged = cli({"run-bundle", "import", file("forged.result").string()}, "import-forged");
  EXPECT_EQ(forged.code, 5) << forged.out;
  EXPECT_NE(forged.out.find("bundle_"), std::string::npos) << forged.out;

  auto imported = cli({"run-bundle", "import", file("plan.result").string()}, "import");
  ASSERT_EQ(imported.code, 0) << imported.out;
  EXPECT_EQ(str(get_run(plan_id), "status"), "succeeded");
}

}  // namespace
}  // namespace takosumi::testing
