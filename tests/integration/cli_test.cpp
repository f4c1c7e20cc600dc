// The takosumi CLI against a real control plane over mutual TLS and a real agent: every
// subcommand (plan → apply → logs → outputs → state versions → rollback → drift, capsules,
// Connections, agents, activity), the --output json shapes, and the exit codes (0 ok, 2 changes,
// 3 failed, 5 refused, 6 unreachable, 64 usage).
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/fifo_gate.hpp"
#include "tests/support/stack.hpp"
#include "tests/support/test_git_repo.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

struct CliResult {
  int code = -1;
  std::string out;
  json::value json;  // null unless the output is JSON
};

class CliTest : public ::testing::Test {
 protected:
  static StackOptions options() {
    StackOptions o;
    o.https = true;
    o.mutual_tls = true;
    return o;
  }

  // `takosumi <args>` started with the URL and token in the environment and TLS files as flags.
  std::unique_ptr<ChildProcess> start(std::vector<std::string> args, const std::string& url,
                                      const std::string& workspace_env,
                                      const std::filesystem::path& log) {
    const std::filesystem::path bin = test_paths::binary_dir;
    const auto files = stack_.client_certificate("operator");
    std::vector<std::string> argv{(bin / "cli/takosumi").string(), "--ca-file",
                                  files.ca_file.string(), "--client-cert", files.cert_file.string(),
                                  "--client-key", files.key_file.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return std::make_unique<ChildProcess>(
        argv,
        std::map<std::string, std::string>{
            {"TAKOSUMI_DEPLOY_CONTROL_URL",
             url.empty() ? "https://localhost:" + std::to_string(stack_.port()) : url},
            {"TAKOSUMI_DEPLOY_CONTROL_TOKEN", "test-api-token-0123456789"},
            {"HOME", stack_.root().string()},
            {"TAKOSUMI_WORKSPACE", workspace_env}},
        log);
  }

  std::filesystem::path next_log() {
    return stack_.root() / ("cli-" + std::to_string(++calls_) + ".out");
  }

  // Runs `takosumi <args>` to its end.
  CliResult cli(std::vector<std::string> args, const std::string& url = "",
                const std::string& workspace_env = "") {
    const auto log = next_log();
    auto p = start(std::move(args), url, workspace_env, log);
    CliResult r;
    r.code = p->wait(300s);
    r.out = read_text(log);
    boost::system::error_code ec;
    r.json = json::parse(r.out, ec);
    if (ec) r.json = nullptr;
    return r;
  }

  std::string write(const std::string& name, const std::string& text) {
    const auto p = stack_.root() / name;
    std::ofstream(p) << text;
    return p.string();
  }

  Stack stack_{options()};
  int calls_ = 0;
};

std::string id_of(const CliResult& r) {
  return r.json.is_object() ? str(r.json.as_object(), "id") : "";
}

TEST_F(CliTest, EverySubcommandAgainstARealControlPlaneAndAgent) {
  TestGitRepo repo(stack_.root() / "repo");
  repo.commit({{"main.tf", R"(variable "size" { type = number }
variable "enabled" { type = bool }
resource "terraform_data" "x" { input = "${var.size}-${var.enabled}-a" }
output "size" { value = var.size }
)"}});

  auto workspaces = cli({"workspace", "list", "-o", "json"});
  ASSERT_EQ(workspaces.code, 0) << workspaces.out;
  ASSERT_EQ(workspaces.json.at("workspaces").as_array().size(), 1u) << workspaces.out;
  const std::string ws = stack_.workspace_id();

  // Typed variables from YAML reach tofu with their type.
  const auto file = write("capsule.yaml", "name: web\nsource:\n  gitUrl: " + repo.url() +
                                              "\n  ref: main\n  modulePath: \"\"\n"
                                              "variables:\n  size: 3\n  enabled: true\n"
                                              "outputAllowlist:\n  size:\n    from: size\n");
  auto created = cli({"capsule", "create", "-f", file, "--workspace", ws, "-o", "json"});
  ASSERT_EQ(created.code, 0) << created.out;
  const std::string capsule = id_of(created);
  auto listed = cli({"capsule", "list", "--workspace", ws});
  EXPECT_EQ(listed.code, 0);
  EXPECT_NE(listed.out.find(capsule), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("NAME"), std::string::npos) << listed.out;
  auto shown = cli({"capsule", "show", capsule, "-o", "json"});
  EXPECT_EQ(id_of(shown), capsule) << shown.out;
  // update: flags and a file of variables together make one new spec revision.
  const auto change = write("change.yaml", "variables:\n  size: 3\n  enabled: true\n");
  auto updated = cli({"capsule", "update", capsule, "--ref", "main", "-f", change, "-o", "json"});
  ASSERT_EQ(updated.code, 0) << updated.out;
  EXPECT_EQ(updated.json.at("specRevision"), 1) << "the same values again are no change";
  auto renamed = cli({"capsule", "update", capsule, "--name", "web-two", "-o", "json"});
  ASSERT_EQ(renamed.code, 0) << renamed.out;
  EXPECT_EQ(renamed.json.at("specRevision"), 2) << renamed.out;
  EXPECT_EQ(renamed.json.at("name"), "web-two") << renamed.out;
  auto refused = cli({"capsule", "update", capsule, "--module-path", "../x"});
  EXPECT_NE(refused.code, 0);
  EXPECT_NE(refused.out.find("modulePath"), std::string::npos) << refused.out;

  // plan: waits, exit 2 for changes; the JSON is the finished Run.
  auto plan = cli({"plan", capsule, "-o", "json"});
  ASSERT_EQ(plan.code, 2) << plan.out;
  EXPECT_EQ(str(plan.json.as_object(), "status"), "succeeded");
  EXPECT_TRUE(plan.json.at("hasChanges").as_bool());
  auto apply = cli({"apply", id_of(plan), "--follow"});
  ASSERT_EQ(apply.code, 0) << apply.out;
  EXPECT_NE(apply.out.find("Apply complete"), std::string::npos) << apply.out;  // the live log
  EXPECT_NE(apply.out.find("succeeded"), std::string::npos) << apply.out;
  auto runs = cli({"runs", capsule, "-o", "json"});
  ASSERT_EQ(runs.code, 0);
  ASSERT_EQ(runs.json.at("runs").as_array().size(), 2u) << runs.out;
  const std::string apply_id = str(runs.json.at("runs").as_array()[0].as_object(), "id");
  auto logs = cli({"logs", apply_id});
  EXPECT_EQ(logs.code, 0);
  EXPECT_NE(logs.out.find("Apply complete"), std::string::npos) << logs.out;

  auto outputs = cli({"outputs", capsule, "-o", "json"});
  ASSERT_EQ(outputs.code, 0) << outputs.out;
  EXPECT_EQ(outputs.json.at("outputs").at("size").as_int64(), 3) << outputs.out;

  // A second apply from a new commit, then a rollback plan to the first StateVersion.
  repo.commit({{"main.tf", R"(variable "size" { type = number }
variable "enabled" { type = bool }
resource "terraform_data" "x" { input = "${var.size}-${var.enabled}-b" }
output "size" { value = var.size }
)"}});
  auto second = cli({"plan", capsule, "-o", "json"});
  ASSERT_EQ(second.code, 2) << second.out;
  // The plan as tofu prints it, attribute by attribute, from the plan view.
  auto shown_run = cli({"run", "show", id_of(second)});
  ASSERT_EQ(shown_run.code, 0) << shown_run.out;
  EXPECT_NE(shown_run.out.find("status: succeeded"), std::string::npos) << shown_run.out;
  EXPECT_NE(shown_run.out.find("  # terraform_data.x "), std::string::npos) << shown_run.out;
  EXPECT_NE(shown_run.out.find(R"(input = "3-true-a" -> "3-true-b")"), std::string::npos) << shown_run.out;
  auto view = cli({"run", "plan", id_of(second), "-o", "json"});
  ASSERT_EQ(view.code, 0) << view.out;
  EXPECT_EQ(str(view.json.at("resources").as_array().at(0).as_object(), "address"), "terraform_data.x")
      << view.out;
  ASSERT_EQ(cli({"apply", id_of(second)}).code, 0);
  auto versions = cli({"state-versions", capsule, "-o", "json"});
  ASSERT_EQ(versions.code, 0);
  const auto& svs = versions.json.at("stateVersions").as_array();
  ASSERT_EQ(svs.size(), 2u) << versions.out;
  const std::string first_sv = str(svs[1].as_object(), "id");
  auto rollback = cli({"rollback", first_sv, "-o", "json"});
  EXPECT_EQ(rollback.code, 2) << rollback.out;
  EXPECT_EQ(str(rollback.json.as_object(), "restoresStateVersionId"), first_sv) << rollback.out;

  auto drift = cli({"drift", capsule, "-o", "json"});
  EXPECT_EQ(drift.code, 0) << drift.out;
  EXPECT_EQ(str(drift.json.as_object(), "type"), "drift_check") << drift.out;
  // A drift check plans nothing: the control plane's reason, not a guess of the CLI's.
  auto no_view = cli({"run", "plan", id_of(drift)});
  EXPECT_NE(no_view.code, 0) << no_view.out;
  EXPECT_NE(no_view.out.find("drift report"), std::string::npos) << no_view.out;

  // Connections, agents, activity.
  const auto conn_file = write("connection.yaml",
                               "name: cli-conn\nprovider: registry.opentofu.org/hashicorp/null\n"
                               "authMode: env\nvalues:\n  CLI_SECRET: \"s3cr3t-from-the-cli\"\n");
  auto conn = cli({"connection", "create", "-f", conn_file, "-o", "json"});
  ASSERT_EQ(conn.code, 0) << conn.out;
  EXPECT_EQ(conn.out.find("s3cr3t-from-the-cli"), std::string::npos) << conn.out;
  auto conns = cli({"connection", "list"});
  EXPECT_NE(conns.out.find("cli-conn"), std::string::npos) << conns.out;
  auto revoked = cli({"connection", "revoke", id_of(conn), "-o", "json"});
  EXPECT_EQ(str(revoked.json.as_object(), "status"), "revoked") << revoked.out;
  auto agents = cli({"agents", "-o", "json"});
  ASSERT_EQ(agents.code, 0) << agents.out;
  EXPECT_EQ(str(agents.json.at("agents").as_array()[0].as_object(), "state"), "online");
  auto activity = cli({"activity", "-o", "json", "--limit", "50"});
  ASSERT_EQ(activity.code, 0) << activity.out;
  EXPECT_NE(activity.out.find("run.finished"), std::string::npos) << activity.out;
}

TEST_F(CliTest, ExitCodesSayWhatHappened) {
  TestGitRepo repo(stack_.root() / "repo");
  repo.commit({{"main.tf", "resource \"terraform_data\" \"x\" { input = undefined_thing }\n"}});
  const auto file = write("capsule.yaml", "name: broken\nsource:\n  gitUrl: " + repo.url() +
                                              "\n  ref: main\n  modulePath: \"\"\n");
  auto created = cli({"capsule", "create", "-f", file, "-o", "json"});
  ASSERT_EQ(created.code, 0) << created.out;
  auto failed = cli({"plan", id_of(created)});
  EXPECT_EQ(failed.code, 3) << failed.out;
  EXPECT_NE(failed.out.find("failed"), std::string::npos) << failed.out;

  auto refused = cli({"plan", "cap_doesnotexist"});
  EXPECT_EQ(refused.code, 5) << refused.out;
  EXPECT_NE(refused.out.find("not_found"), std::string::npos) << refused.out;

  auto unreachable = cli({"workspace", "list"}, "https://localhost:1");
  EXPECT_EQ(unreachable.code, 6) << unreachable.out;

  // --workspace wins over TAKOSUMI_WORKSPACE, which wins over "the only one".
  const std::string ws = stack_.workspace_id();
  EXPECT_EQ(cli({"capsule", "list", "--workspace", ws}, "", "ws_0000").code, 0);
  EXPECT_EQ(cli({"capsule", "list"}, "", "ws_0000").code, 5);
  EXPECT_EQ(cli({"capsule", "list"}).code, 0);

  // A Run cancelled while the CLI waits for it: exit 4. The plan reads a FIFO, so it is surely
  // running when the cancel comes.
  const FifoGate gate(stack_.real_world() / "gate");
  TestGitRepo slow(stack_.root() / "slow");
  slow.commit({{"main.tf", gate.module()}});
  const auto slow_file = write("slow.yaml", "name: slow\nsource:\n  gitUrl: " + slow.url() +
                                                "\n  ref: main\n  modulePath: \"\"\n");
  const std::string slow_capsule = id_of(cli({"capsule", "create", "-f", slow_file, "-o", "json"}));
  const auto waiting_log = next_log();
  auto waiting = start({"plan", slow_capsule, "-o", "json", "--follow"}, "", "", waiting_log);
  std::string run_id;
  ASSERT_TRUE(eventually([&] {
    auto runs = stack_.api().get("/api/v1/capsules/" + slow_capsule + "/runs");
    if (!runs.json.is_object() || runs.json.at("runs").as_array().empty()) return false;
    run_id = str(runs.json.at("runs").as_array()[0].as_object(), "id");
    return stack_.api().get("/api/v1/runs/" + run_id + "/logs").body.find("Reading") !=
           std::string::npos;
  }, 120s)) << stack_.agent_logs();
  EXPECT_EQ(cli({"cancel", run_id}).code, 0);
  // Once the agent has interrupted tofu (its next heartbeat), let the blocked read end.
  EXPECT_TRUE(eventually([&] {
    return stack_.agent_logs().find("cancel requested by the control plane") != std::string::npos;
  }, 60s)) << stack_.agent_logs();
  gate.open(0s);
  EXPECT_EQ(waiting->wait(180s), 4) << read_text(waiting_log);
  // The finished Run, as JSON (stdout and stderr share the file here).
  const std::string waited = read_text(waiting_log);
  EXPECT_NE(waited.find("\"status\":\"cancelled\""), std::string::npos) << waited;

  auto usage = cli({"plan"});
  EXPECT_EQ(usage.code, 64) << usage.out;

  auto completion = cli({"completion"});
  EXPECT_EQ(completion.code, 0);
  EXPECT_NE(completion.out.find("complete -F _takosumi takosumi"), std::string::npos);
}

}  // namespace
}  // namespace takosumi::testing
