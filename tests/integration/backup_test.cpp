// Backups end to end (docs/backup-and-restore.md): a Workspace's control information leaves one
// control plane as a signed document and is recreated in another, over the real control planes,
// agents and OpenTofu. No secret is in the document; every restored Capsule needs its Connections
// again before it is whole.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "tests/support/http_client.hpp"
#include "tests/support/stack.hpp"
#include "tests/support/test_git_repo.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;

constexpr const char* kConnectionValue = "backup-connection-canary-71c3";
constexpr const char* kSensitiveValue = "backup-sensitive-canary-9e02";

constexpr const char* kModule = R"(
variable "greeting" { type = string }
variable "replicas" { type = number }
variable "db_password" {
  type      = string
  sensitive = true
}
resource "terraform_data" "app" { input = "${var.greeting} x${var.replicas}" }
output "greeting" { value = terraform_data.app.output }
)";

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

json::object connection(const std::string& workspace_id) {
  return {{"workspaceId", workspace_id}, {"name", "local-api"},
          {"provider", "registry.opentofu.org/hashicorp/local"}, {"authMode", "env"},
          {"values", json::object{{"DEMO_API_TOKEN", kConnectionValue}}}};
}

json::object git_connection(const std::string& workspace_id) {
  return {{"workspaceId", workspace_id}, {"name", "deploy-key"}, {"kind", "git"},
          {"values", json::object{{"TOKEN", kConnectionValue}}}};
}

TEST(BackupTest, AWorkspaceMovesToAnotherControlPlaneWithoutItsSecrets) {
  Stack source;
  TestGitRepo repo(source.root() / "repo");
  repo.commit({{"main.tf", kModule}});

  auto shop = source.api().post("/api/v1/workspaces", json::object{{"name", "shop"}});
  ASSERT_EQ(shop.status, 201u) << shop.body;
  const std::string ws = str(shop.json.as_object(), "id");
  auto conn = source.api().post("/api/v1/connections", connection(ws));
  ASSERT_EQ(conn.status, 201u) << conn.body;
  // The source's Connection of kind git (a local repository takes no credential; it travels all
  // the same) is a secret a backup cannot hold either.
  auto deploy = source.api().post("/api/v1/connections", git_connection(ws));
  ASSERT_EQ(deploy.status, 201u) << deploy.body;
  auto created = source.api().post(
      "/api/v1/workspaces/" + ws + "/capsules",
      json::object{{"name", "app"},
                   {"source", json::object{{"gitUrl", repo.url()}, {"ref", "main"}, {"modulePath", ""},
                                           {"connection", str(deploy.json.as_object(), "id")}}},
                   {"variables", json::object{{"greeting", "hello"}, {"replicas", 3}}},
                   {"sensitiveVariables", json::object{{"db_password", kSensitiveValue}}},
                   {"connections", json::array{str(conn.json.as_object(), "id").c_str()}},
                   {"outputAllowlist",
                    json::object{{"greeting", json::object{{"from", "greeting"}, {"type", "string"}}}}}});
  ASSERT_EQ(created.status, 201u) << created.body;
  const std::string capsule = str(created.json.as_object(), "id");
  auto plan = source.plan(capsule);
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan) << source.agent_logs();
  ASSERT_EQ(str(source.apply(str(plan, "id")), "status"), "succeeded") << source.agent_logs();

  // A consumer of the app's greeting, never planned: its Dependency travels with the backup.
  auto web = source.api().post(
      "/api/v1/workspaces/" + ws + "/capsules",
      json::object{{"name", "web"},
                   {"source", json::object{{"gitUrl", repo.url()}, {"ref", "main"}, {"modulePath", ""}}},
                   {"variables", json::object{{"replicas", 1}}}});
  ASSERT_EQ(web.status, 201u) << web.body;
  const std::string consumer = str(web.json.as_object(), "id");
  auto dependency = source.api().post(
      "/api/v1/capsules/" + consumer + "/dependencies",
      json::object{{"producerCapsuleId", capsule},
                   {"outputs", json::object{{"greeting", json::object{{"from", "greeting"},
                                                                       {"type", "string"}}}}}});
  ASSERT_EQ(dependency.status, 201u) << dependency.body;

  auto made = source.api().post("/api/v1/workspaces/" + ws + "/backups", json::object{});
  ASSERT_EQ(made.status, 201u) << made.body;
  EXPECT_EQ(made.body.find(kConnectionValue), std::string::npos);
  EXPECT_EQ(made.body.find(kSensitiveValue), std::string::npos);
  const std::string backup_id = str(made.json.as_object(), "id");
  auto listed = source.api().get("/api/v1/workspaces/" + ws + "/backups");
  ASSERT_EQ(listed.json.at("backups").as_array().size(), 1u) << listed.body;
  auto document = source.api().get("/api/v1/backups/" + backup_id);
  ASSERT_EQ(document.status, 200u) << document.body;
  // The creating answer carries the same signed document; the Workspace's path downloads it too,
  // byte for byte, and another Workspace's path does not.
  EXPECT_EQ(made.json.at("document"), document.json) << made.body;
  auto by_workspace = source.api().get("/api/v1/workspaces/" + ws + "/backups/" + backup_id);
  ASSERT_EQ(by_workspace.status, 200u) << by_workspace.body;
  EXPECT_EQ(by_workspace.body, document.body);
  auto other = source.api().post("/api/v1/workspaces", json::object{{"name", "other"}});
  ASSERT_EQ(other.status, 201u) << other.body;
  EXPECT_EQ(source.api()
                .get("/api/v1/workspaces/" + str(other.json.as_object(), "id") + "/backups/" +
                     backup_id)
                .status,
            404u);
  EXPECT_EQ(document.body.find(kConnectionValue), std::string::npos);
  EXPECT_EQ(document.body.find(kSensitiveValue), std::string::npos);
  const auto payload = json::parse(str(document.json.as_object(), "payload")).as_object();
  EXPECT_EQ(payload.at("workspace").at("id"), ws.c_str());
  EXPECT_EQ(payload.at("capsules").as_array().size(), 2u);
  EXPECT_EQ(payload.at("dependencies").as_array().size(), 1u);
  EXPECT_EQ(payload.at("runs").as_array().size(), 2u);
  EXPECT_EQ(payload.at("stateVersions").as_array().size(), 1u);
  for (const auto& c : payload.at("capsules").as_array()) {
    if (c.at("id") == capsule.c_str()) {
      EXPECT_EQ(c.at("sensitiveVariableNames"), (json::array{"db_password"}));
    }
  }

  // The other control plane and its agent may read the repository, which lies in the first
  // stack's directory.
  StackOptions readers;
  readers.extra_control_yaml = "sources:\n  fileRoots: [" + source.root().string() + "]\n";
  readers.extra_agent_yaml = "source:\n  fileRoots: [" + source.root().string() + "]\n";
  Stack target(readers);
  const std::string source_key = read_text(source.data_dir() / "keys/signing.pub");
  auto restore = [&](const std::string& body, const std::string& key) {
    return target.api().request("POST", "/api/v1/workspaces/restore", body,
                                {{"x-takosumi-source-key", key}});
  };
  // Only the exact document, and only with the key of the control plane that signed it.
  std::string tampered = document.body;
  tampered.replace(tampered.find("hello"), 5, "HELLO");
  EXPECT_EQ(str(restore(tampered, source_key).json.at("error").as_object(), "code"),
            "backup_invalid");
  const std::string own_key = read_text(target.data_dir() / "keys/signing.pub");
  auto foreign = restore(document.body, own_key);
  EXPECT_EQ(foreign.status, 400u) << foreign.body;
  EXPECT_EQ(str(foreign.json.at("error").as_object(), "code"), "backup_signature_invalid");

  // The restore itself by the operator's command on the target's host, beside its running
  // server (the API's POST /api/v1/workspaces/restore answers the same).
  std::ofstream(target.root() / "backup.json") << document.body;
  const auto restore_command = [&](const std::filesystem::path& config, const std::string& log) {
    return std::make_unique<ChildProcess>(
        std::vector<std::string>{
            (std::filesystem::path(test_paths::binary_dir) / "controlplane/takosumi-control")
                .string(),
            "restore", "--config", config.string(), "--source-key",
            (source.data_dir() / "keys/signing.pub").string(),
            (target.root() / "backup.json").string()},
        std::map<std::string, std::string>{}, target.root() / log);
  };
  // A mistyped dataDir is refused, not filled with a new store and keys.
  std::string typo = read_text(target.root() / "control.yaml");
  const auto at = typo.find(target.data_dir().string());
  ASSERT_NE(at, std::string::npos) << typo;
  typo.replace(at, target.data_dir().string().size(), (target.root() / "typo").string());
  std::ofstream(target.root() / "typo.yaml") << typo;
  EXPECT_EQ(
      restore_command(target.root() / "typo.yaml", "typo.log")->wait(std::chrono::seconds(60)), 1)
      << read_text(target.root() / "typo.log");
  EXPECT_FALSE(std::filesystem::exists(target.root() / "typo"));
  auto command = restore_command(target.root() / "control.yaml", "restore.log");
  ASSERT_EQ(command->wait(std::chrono::seconds(60)), 0) << read_text(target.root() / "restore.log");
  const std::string said = read_text(target.root() / "restore.log");
  const auto line = said.find("{\"workspace\"");
  ASSERT_NE(line, std::string::npos) << said;
  const auto restored = json::parse(said.substr(line, said.find('\n', line) - line)).as_object();
  std::vector<std::string> restored_ids;
  for (const auto& id : restored.at("capsuleIds").as_array()) restored_ids.emplace_back(id.as_string());
  std::sort(restored_ids.begin(), restored_ids.end());
  std::vector<std::string> expected_ids{capsule, consumer};
  std::sort(expected_ids.begin(), expected_ids.end());
  EXPECT_EQ(restored_ids, expected_ids);
  EXPECT_EQ(restored.at("workspace").at("id"), ws.c_str());
  auto restored_dependencies = target.api().get("/api/v1/capsules/" + consumer + "/dependencies");
  ASSERT_EQ(restored_dependencies.status, 200u) << restored_dependencies.body;
  ASSERT_EQ(restored_dependencies.json.at("asConsumer").as_array().size(), 1u)
      << restored_dependencies.body;
  EXPECT_EQ(restored_dependencies.json.at("asConsumer").at(0).at("producerCapsuleId"),
            capsule.c_str());
  EXPECT_EQ(restore(document.body, source_key).status, 409u) << "restored twice";

  // Secrets are never in a backup: the restored Capsule asks for them.
  auto waiting = target.capsule(capsule);
  ASSERT_TRUE(waiting.at("needsAttention").as_bool()) << json::serialize(waiting);
  const auto& notice = waiting.at("attention").as_array().at(0).as_object();
  EXPECT_EQ(str(notice, "code"), "connections_missing");
  EXPECT_NE(str(notice, "message").find("local-api"), std::string::npos) << str(notice, "message");
  EXPECT_NE(str(notice, "message").find("db_password"), std::string::npos) << str(notice, "message");
  EXPECT_EQ(waiting.at("variables"), (json::object{{"greeting", "hello"}, {"replicas", 3}}));

  auto again = target.api().post("/api/v1/connections", connection(ws));
  ASSERT_EQ(again.status, 201u) << again.body;
  ASSERT_EQ(target.api().put("/api/v1/capsules/" + capsule + "/sensitive-variables",
                             json::object{{"sensitiveVariables",
                                           json::object{{"db_password", kSensitiveValue}}}})
                .status, 200u);
  ASSERT_EQ(target.api().put("/api/v1/capsules/" + capsule + "/connections",
                             json::object{{"connections",
                                           json::array{str(again.json.as_object(), "id").c_str()}}})
                .status, 200u);
  // The source's Connection is named on its own, and asked for until it is.
  auto source_missing = target.capsule(capsule);
  const auto& asks = source_missing.at("attention").as_array();
  ASSERT_EQ(asks.size(), 2u) << json::serialize(source_missing);
  EXPECT_EQ(str(asks[0].as_object(), "code"), "connections_missing");
  EXPECT_NE(str(asks[0].as_object(), "message").find("\"deploy-key\""), std::string::npos)
      << json::serialize(source_missing);
  EXPECT_NE(str(asks[0].as_object(), "message").find("/source-connection"), std::string::npos)
      << json::serialize(source_missing);
  auto deploy_again = target.api().post("/api/v1/connections", git_connection(ws));
  ASSERT_EQ(deploy_again.status, 201u) << deploy_again.body;
  // Not a Connection of kind provider, and not another Workspace's.
  EXPECT_EQ(target.api()
                .put("/api/v1/capsules/" + capsule + "/source-connection",
                     json::object{{"connection", str(again.json.as_object(), "id")}})
                .status,
            400u);
  auto set = target.api().put("/api/v1/capsules/" + capsule + "/source-connection",
                              json::object{{"connection", str(deploy_again.json.as_object(), "id")}});
  ASSERT_EQ(set.status, 200u) << set.body;
  EXPECT_EQ(set.json.at("source").at("connection"), str(deploy_again.json.as_object(), "id").c_str()) << set.body;
  // Its state has not arrived: no Run may start from empty state and recreate what exists.
  auto still = target.capsule(capsule);
  ASSERT_EQ(still.at("attention").as_array().size(), 1u) << json::serialize(still);
  EXPECT_EQ(str(still.at("attention").as_array()[0].as_object(), "code"), "state_missing");
  auto early = target.api().post("/api/v1/capsules/" + capsule + "/plan", json::object{});
  EXPECT_EQ(early.status, 409u) << early.body;
  EXPECT_NE(early.body.find("start-without-state"), std::string::npos) << early.body;

  // State moves in its own step: the source re-seals each data key to the target's storage key.
  const std::string target_storage = read_text(target.data_dir() / "keys/storage.pub");
  auto transfer = source.api().post("/api/v1/workspaces/" + ws + "/state-transfers",
                                    json::object{{"destinationStoragePublicKey", target_storage}});
  ASSERT_EQ(transfer.status, 200u) << transfer.body;
  EXPECT_EQ(transfer.body.find(kSensitiveValue), std::string::npos);
  EXPECT_EQ(transfer.body.find(kConnectionValue), std::string::npos);
  const std::string import_url = "/api/v1/workspaces/" + ws + "/state-transfers/import";
  auto imported = target.api().request("POST", import_url, transfer.body,
                                       {{"x-takosumi-source-key", source_key}});
  ASSERT_EQ(imported.status, 200u) << imported.body;
  EXPECT_EQ(imported.json.at("stateVersionIds").as_array().size(), 1u) << imported.body;
  auto twice = target.api().request("POST", import_url, transfer.body,
                                    {{"x-takosumi-source-key", source_key}});
  ASSERT_EQ(twice.status, 200u) << twice.body;
  EXPECT_TRUE(twice.json.at("stateVersionIds").as_array().empty()) << twice.body;
  EXPECT_FALSE(target.capsule(capsule).at("needsAttention").as_bool());
  // Moving state takes the admin token: whoever names the destination key can read the state.
  auto owner = source.api().post("/api/v1/tokens",
                                 json::object{{"name", "owner"}, {"roles", json::object{{ws, "owner"}}}});
  ASSERT_EQ(owner.status, 201u) << owner.body;
  const HttpClient owner_client(source.port(), str(owner.json.as_object(), "secret"));
  auto by_owner = owner_client.post("/api/v1/workspaces/" + ws + "/state-transfers",
                                    json::object{{"destinationStoragePublicKey", target_storage}});
  EXPECT_EQ(by_owner.status, 403u) << by_owner.body;
  EXPECT_EQ(twice.json.at("alreadyPresent").as_int64(), 1) << twice.body;
  // A bundle sealed to another key is refused before anything is stored.
  auto elsewhere = source.api().post(
      "/api/v1/workspaces/" + ws + "/state-transfers",
      json::object{{"destinationStoragePublicKey", read_text(source.data_dir() / "keys/storage.pub")}});
  auto wrong = target.api().request("POST", import_url, elsewhere.body,
                                    {{"x-takosumi-source-key", source_key}});
  EXPECT_EQ(wrong.status, 400u) << wrong.body;

  // The restored Workspace with its state plans as "no changes" against the same resources.
  auto replanned = target.plan(capsule);
  ASSERT_EQ(str(replanned, "status"), "succeeded") << json::serialize(replanned) << target.agent_logs();
  EXPECT_FALSE(replanned.at("hasChanges").as_bool()) << json::serialize(replanned);
  auto outputs = target.api().get("/api/v1/capsules/" + capsule + "/outputs");
  EXPECT_EQ(str(outputs.json.at("outputs").as_object(), "greeting"), "hello x3") << outputs.body;

  auto activity = target.api().get("/api/v1/workspaces/" + ws + "/activity");
  EXPECT_NE(activity.body.find("workspace.restored"), std::string::npos) << activity.body;
  for (const Stack* stack : {&source, &target}) {
    EXPECT_TRUE(files_containing(stack->data_dir(), kConnectionValue).empty());
    EXPECT_TRUE(files_containing(stack->data_dir(), kSensitiveValue).empty());
  }
}

}  // namespace
}  // namespace takosumi::testing
