// Sources are per Workspace by construction, with the real control plane, agent, OpenTofu and a
// real Git server (git's own http-backend behind TLS on loopback): under the default settings a
// Workspace's owner cannot plan another Workspace's repository, neither by its path, nor by the
// agent's cached copy, nor by a URL carrying the other's credentials; a private repository is
// read with a Connection of kind git, whose token reaches the fetch and nothing else.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/git_https_server.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/stack.hpp"
#include "tests/support/test_git_repo.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;

constexpr const char* kToken = "tok-a-9f2e61c4d7b38a05";
constexpr const char* kModule =
    "resource \"terraform_data\" \"secret_plan\" {\n  input = \"workspace-a-private-value\"\n}\n";

// Default source settings (no file roots anywhere), with the test Git server's CA trusted and,
// since it listens on loopback, loopback hosts allowed where `loopback` says.
StackOptions default_sources(const fs::path& ca, bool control_loopback = true, bool agent_loopback = true) {
  const auto loopback = [](bool allowed) { return allowed ? "  allowLoopbackHosts: true\n" : ""; };
  StackOptions o;
  o.extra_control_yaml = "sources:\n  fileRoots: []\n  caFile: " + ca.string() + "\n" + loopback(control_loopback);
  o.extra_agent_yaml = "source:\n  fileRoots: []\n  caFile: " + ca.string() + "\n" + loopback(agent_loopback);
  return o;
}

class SourceTest : public ::testing::Test {
 protected:

  std::string git_connection(const HttpClient& api, const std::string& workspace,
                             const std::string& name, const std::string& token) {
    auto r = api.post("/api/v1/connections",
                      json::object{{"workspaceId", workspace}, {"name", name}, {"kind", "git"},
                                   {"values", json::object{{"TOKEN", token}}}});
    EXPECT_EQ(r.status, 201u) << r.body;
    return r.status == 201u ? str(r.json.as_object(), "id") : "";
  }

  JsonResponse create(const HttpClient& api, const std::string& workspace, const std::string& name,
                      const std::string& url, const std::optional<std::string>& connection = {}) {
    json::object source{{"gitUrl", url}, {"ref", "main"}, {"modulePath", ""}};
    if (connection) source["connection"] = *connection;
    return api.post("/api/v1/workspaces/" + workspace + "/capsules",
                    json::object{{"name", name}, {"source", source}, {"outputAllowlist", json::object{}}});
  }

  TempDir root_;
  fs::path repos_ = [this] {
    fs::create_directories(root_ / "repos");
    return root_ / "repos";
  }();
  TestCa ca_{"git-ca"};
  bool ca_written_ = [this] {  // before the stack's configuration names it
    ca_.write_cert(root_ / "git-ca.pem");
    return true;
  }();
  GitHttpsServer server_{ca_, repos_, kToken};
  Stack stack_{default_sources(root_ / "git-ca.pem")};
};

TEST_F(SourceTest, APrivateRepositoryIsReadWithAConnectionOfKindGitAndItsTokenGoesNowhereElse) {
  TestGitRepo repo(repos_ / "a.git");
  repo.commit({{"main.tf", kModule}});
  const std::string ws_a = stack_.workspace_id();
  const auto conn = git_connection(stack_.api(), ws_a, "deploy", kToken);
  auto shown = stack_.api().get("/api/v1/connections/" + conn);
  ASSERT_EQ(shown.status, 200u) << shown.body;
  EXPECT_EQ(str(shown.json.as_object(), "kind"), "git");
  EXPECT_FALSE(shown.json.as_object().contains("provider")) << shown.body;

  // Without it the control plane cannot list the refs, and says what to do.
  auto bare = create(stack_.api(), ws_a, "bare", server_.url("a.git"));
  ASSERT_EQ(bare.status, 201u) << bare.body;
  auto refused = stack_.api().post("/api/v1/capsules/" + str(bare.json.as_object(), "id") + "/plan", json::object{});
  EXPECT_EQ(refused.status, 502u) << refused.body;
  EXPECT_NE(refused.body.find("Connection of kind git"), std::string::npos) << refused.body;

  auto made = create(stack_.api(), ws_a, "app", server_.url("a.git"), conn);
  ASSERT_EQ(made.status, 201u) << made.body;
  const std::string capsule = str(made.json.as_object(), "id");
  EXPECT_EQ(str(stack_.capsule(capsule).at("source").as_object(), "connection"), conn);
  auto plan = stack_.plan(capsule);
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan) << stack_.agent_logs();
  auto applied = stack_.apply(str(plan, "id"));
  ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied);
  EXPECT_GT(server_.refused(), 0) << "the server did ask for credentials";
  // A token in a URL is refused, naming the mechanism, and never echoed.
  auto in_url = create(stack_.api(), ws_a, "inurl", "https://x-access-token:" + std::string(kToken) + "@" +
                                                        server_.url("a.git").substr(8));
  EXPECT_EQ(in_url.status, 400u) << in_url.body;
  EXPECT_NE(in_url.body.find("source_denied"), std::string::npos) << in_url.body;
  EXPECT_NE(in_url.body.find("Connection of kind git"), std::string::npos) << in_url.body;
  // The token: in the fetch only. Never in an answer, a log, the data directories.
  const std::string surface = stack_.public_surface({capsule}, {conn}) + stack_.agent_logs() +
                              in_url.body;
  EXPECT_EQ(surface.find(kToken), std::string::npos);
  for (const auto& e : fs::recursive_directory_iterator(stack_.root())) {
    if (!e.is_regular_file() || e.file_size() > (64 << 20)) continue;
    std::ifstream in(e.path(), std::ios::binary);
    const std::string content((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(content.find(kToken), std::string::npos) << e.path();
  }
}

// The attacks of issue 33, by the owner of Workspace B against Workspace A's repository, under the
// default settings: its path (file:// and bare), the agent's own cached copy of it, and A's URL
// with A's token in it are refused before anything is read; A's URL alone gets no further than
// the server's refusal, and A's Connection is not B's to name.
TEST_F(SourceTest, AWorkspaceCannotPlanAnotherWorkspacesRepository) {
  TestGitRepo repo(repos_ / "a.git");
  repo.commit({{"main.tf", kModule}});
  const std::string ws_a = stack_.workspace_id();
  const auto conn_a = git_connection(stack_.api(), ws_a, "deploy", kToken);
  auto a = create(stack_.api(), ws_a, "app", server_.url("a.git"), conn_a);
  ASSERT_EQ(a.status, 201u) << a.body;
  ASSERT_EQ(str(stack_.apply(str(stack_.plan(str(a.json.as_object(), "id")), "id")), "status"), "succeeded")
      << stack_.agent_logs();

  auto ws_b = stack_.api().post("/api/v1/workspaces", json::object{{"name", "tenant-b"}});
  ASSERT_EQ(ws_b.status, 201u) << ws_b.body;
  const std::string b = str(ws_b.json.as_object(), "id");
  auto token = stack_.api().post("/api/v1/tokens", json::object{{"name", "owner-b"},
                                                                 {"roles", json::object{{b, "owner"}}}});
  ASSERT_EQ(token.status, 201u) << token.body;
  const HttpClient owner_b = stack_.api().with_token(str(token.json.as_object(), "secret"));

  fs::path cached;
  for (const auto& e : fs::recursive_directory_iterator(stack_.agent_dir(0) / "state/git-cache"))
    if (e.path().extension() == ".git") cached = e.path();
  ASSERT_FALSE(cached.empty()) << "the agent has a cache of A's repository";
  int n = 0;
  for (const std::string& url : {"file://" + (repos_ / "a.git").string(), (repos_ / "a.git").string(),
                                 "file://" + cached.string(), cached.string(),
                                 "https://x-access-token:" + std::string(kToken) + "@" + server_.url("a.git").substr(8),
                                 std::string("http://localhost:") + std::to_string(server_.port()) + "/a.git",
                                 std::string("git://localhost/a.git")}) {
    auto r = create(owner_b, b, "steal" + std::to_string(n++), url);
    EXPECT_EQ(r.status, 400u) << url << ": " << r.body;
    EXPECT_NE(r.body.find("source_denied"), std::string::npos) << url << ": " << r.body;
  }
  auto foreign = create(owner_b, b, "foreign", server_.url("a.git"), conn_a);
  EXPECT_EQ(foreign.status, 400u) << foreign.body;
  auto guess = create(owner_b, b, "guess", server_.url("a.git"));
  ASSERT_EQ(guess.status, 201u) << guess.body;
  auto plan = owner_b.post("/api/v1/capsules/" + str(guess.json.as_object(), "id") + "/plan", json::object{});
  EXPECT_EQ(plan.status, 502u) << plan.body;
  EXPECT_EQ(plan.body.find("workspace-a-private-value"), std::string::npos) << plan.body;
}

// The agent keeps its own rule whatever the control plane allows: here the control plane may
// reach the loopback Git server (it resolves the ref), the agent may not (source.allowLoopbackHosts
// is off), so the Run fails source_denied naming the agent's setting and nothing is checked out.
TEST(SourceRules, TheAgentRefusesALoopbackHostItsOwnConfigurationDoesNotAllow) {
  TempDir root;
  fs::create_directories(root / "repos");
  TestCa ca("git-ca");
  ca.write_cert(root / "git-ca.pem");
  GitHttpsServer server(ca, root / "repos", kToken);
  TestGitRepo repo(root / "repos/a.git");
  repo.commit({{"main.tf", kModule}});
  Stack stack(default_sources(root / "git-ca.pem", true, false));
  auto conn = stack.api().post("/api/v1/connections",
                               json::object{{"workspaceId", stack.workspace_id()}, {"name", "deploy"}, {"kind", "git"},
                                            {"values", json::object{{"TOKEN", kToken}}}});
  ASSERT_EQ(conn.status, 201u) << conn.body;
  auto capsule = stack.api().post(
      "/api/v1/workspaces/" + stack.workspace_id() + "/capsules",
      json::object{{"name", "app"},
                   {"source", json::object{{"gitUrl", server.url("a.git")}, {"ref", "main"}, {"modulePath", ""},
                                           {"connection", str(conn.json.as_object(), "id")}}},
                   {"outputAllowlist", json::object{}}});
  ASSERT_EQ(capsule.status, 201u) << capsule.body;
  const auto plan = stack.plan(str(capsule.json.as_object(), "id"));
  EXPECT_EQ(str(plan, "status"), "failed") << json::serialize(plan);
  ASSERT_TRUE(plan.contains("failure") && plan.at("failure").is_object()) << json::serialize(plan);
  EXPECT_EQ(str(plan.at("failure").as_object(), "code"), "source_denied") << json::serialize(plan);
  EXPECT_NE(str(plan.at("failure").as_object(), "message").find("source.allowLoopbackHosts"), std::string::npos)
      << json::serialize(plan);
}

}  // namespace
}  // namespace takosumi::testing
