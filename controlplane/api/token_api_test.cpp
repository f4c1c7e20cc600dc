// Scoped API tokens over the real HTTP API: a secret shown once and kept only as a hash, roles
// per Workspace (viewer reads, operator runs, owner changes), refusals that name the missing
// role and look the same whether the object exists elsewhere or not at all, actions audited by
// token id, and revoked or expired tokens refused.
#include "common/clock.hpp"
#include "common/file_io.hpp"
#include "controlplane/api/output_share_api.hpp"
#include "controlplane/testing/http_api_fixture.hpp"

namespace takosumi::controlplane {
namespace {

struct Token {
  std::string id;
  std::string secret;
};

class TokenApiTest : public HttpApiTest {
 protected:
  void SetUp() override {
    HttpApiTest::SetUp();
    team_a_ = create_workspace("team-a");
    team_b_ = create_workspace("team-b");
    capsule_a_ = create_capsule(team_a_, "app");
    capsule_b_ = create_capsule(team_b_, "app");
  }

  Token token(const json::object& roles, const std::string& as = kApiToken,
              unsigned expected = 201u) {
    auto r = with(as, http::verb::post, "/api/v1/tokens",
                  json::object{{"name", "ci"}, {"roles", roles}});
    EXPECT_EQ(r.status, expected) << r.body;
    if (r.status != 201u) return {};
    return {r.str("id"), r.str("secret")};
  }
  Reply with(const std::string& secret, http::verb verb, const std::string& target,
             const json::value& body = json::object{}) {
    return send(verb, target, json::serialize(body), {{"authorization", "Bearer " + secret}});
  }
  static void expect_forbidden(const Reply& r, const std::string& role) {
    EXPECT_EQ(r.status, 403u) << r.body;
    EXPECT_NE(r.body.find("\"forbidden\""), std::string::npos) << r.body;
    EXPECT_NE(r.body.find("the " + role + " role"), std::string::npos) << r.body;
  }

  std::string team_a_, team_b_, capsule_a_, capsule_b_;
};

TEST_F(TokenApiTest, TheSecretIsShownOnceAndKeptOnlyAsItsHash) {
  auto created = api(http::verb::post, "/api/v1/tokens",
                     json::object{{"name", "deployer"}, {"roles", json::object{{team_a_, "operator"}}},
                                  {"expiresInSeconds", 3600}});
  ASSERT_EQ(created.status, 201u) << created.body;
  const std::string secret = created.str("secret");
  EXPECT_TRUE(secret.starts_with("tkn_")) << secret;
  EXPECT_EQ(created.obj().at("roles"), (json::object{{team_a_, "operator"}}));
  EXPECT_EQ(created.obj().at("expiresAt"), json::value(utc_timestamp(clock_.now_unix() + 3600)));

  auto listed = api(http::verb::get, "/api/v1/tokens");
  ASSERT_EQ(listed.status, 200u) << listed.body;
  EXPECT_EQ(listed.obj().at("tokens").as_array().size(), 1u);
  EXPECT_EQ(listed.body.find(secret), std::string::npos) << listed.body;
  EXPECT_EQ(listed.body.find("\"secret\""), std::string::npos) << listed.body;
  ASSERT_EQ(with(secret, http::verb::get, "/api/v1/capsules/" + capsule_a_).status, 200u);
  control_->stop();
  server_.join();
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_.path() / "data")) {
    if (!entry.is_regular_file()) continue;
    auto bytes = read_file(entry.path(), std::size_t{64} << 20);
    ASSERT_TRUE(bytes) << bytes.error().to_string();
    EXPECT_EQ(bytes->find(secret), std::string::npos) << entry.path();
  }
}

TEST_F(TokenApiTest, EachRoleDoesWhatItNamesAndNoMore) {
  const Token viewer = token({{team_a_, "viewer"}});
  const Token operator_ = token({{team_a_, "operator"}});
  const Token owner = token({{team_a_, "owner"}});
  const std::string plan = "/api/v1/capsules/" + capsule_a_ + "/plan";
  const json::object connection{{"workspaceId", team_a_}, {"name", "gh"},
                                {"provider", "registry.opentofu.org/integrations/github"},
                                {"authMode", "env"},
                                {"values", json::object{{"GITHUB_TOKEN", "x"}}}};

  EXPECT_EQ(with(viewer.secret, http::verb::get, "/api/v1/capsules/" + capsule_a_).status, 200u);
  EXPECT_EQ(with(viewer.secret, http::verb::get, "/api/v1/workspaces/" + team_a_ + "/activity")
                .status, 200u);
  expect_forbidden(with(viewer.secret, http::verb::post, plan), "operator");

  auto planned = with(operator_.secret, http::verb::post, plan);
  ASSERT_EQ(planned.status, 201u) << planned.body;
  expect_forbidden(with(operator_.secret, http::verb::post, "/api/v1/connections", connection),
                   "owner");
  expect_forbidden(with(operator_.secret, http::verb::delete_, "/api/v1/capsules/" + capsule_a_),
                   "owner");
  expect_forbidden(with(operator_.secret, http::verb::put,
                        "/api/v1/capsules/" + capsule_a_ + "/policy", json::object{}),
                   "owner");
  EXPECT_EQ(with(operator_.secret, http::verb::post,
                 "/api/v1/runs/" + planned.str("id") + "/cancel").status, 200u);

  EXPECT_EQ(with(owner.secret, http::verb::post, "/api/v1/connections", connection).status, 201u);
  // An owner gives roles in its own Workspaces only, and never administers the control plane.
  token({{team_a_, "viewer"}}, owner.secret);
  token({{team_b_, "viewer"}}, owner.secret, 403u);
  expect_forbidden(with(owner.secret, http::verb::post, "/api/v1/tokens",
                        json::object{{"name", "x"}, {"roles", json::object{{team_a_, "viewer"},
                                                                           {team_b_, "viewer"}}}}),
                   "owner");
  auto workspace = with(owner.secret, http::verb::post, "/api/v1/workspaces",
                        json::object{{"name", "mine"}});
  EXPECT_EQ(workspace.status, 403u) << workspace.body;
  EXPECT_NE(workspace.body.find("admin token"), std::string::npos) << workspace.body;
  EXPECT_EQ(with(owner.secret, http::verb::post, "/api/v1/agents/agt_x/reset-keys",
                 json::object{{"signPublicKey", std::string(44, 'A')}}).status, 403u);

  // Each action names the token that did it, and so does a refusal (the first of each token's
  // minute, in its own Workspace).
  auto events = api(http::verb::get, "/api/v1/workspaces/" + team_a_ + "/activity");
  std::vector<std::string> acted;
  std::map<std::string, int> refused;
  for (const auto& e : events.obj().at("events").as_array()) {
    const auto action = json::value_to<std::string>(e.at("action"));
    const auto actor = json::value_to<std::string>(e.at("actor"));
    if (action == "token.refused")
      ++refused[actor];
    else
      acted.push_back(action + " " + actor);
  }
  EXPECT_EQ(refused["token:" + owner.id], 1) << "once a minute per token";
  EXPECT_EQ(refused["token:" + operator_.id], 1);
  ASSERT_GE(acted.size(), 5u) << events.body;
  EXPECT_EQ(std::vector<std::string>(acted.begin(), acted.begin() + 5),
            (std::vector<std::string>{"token.created token:" + owner.id,
                                      "connection.created token:" + owner.id,
                                      "run.finished token:" + operator_.id,
                                      "run.cancel_requested token:" + operator_.id,
                                      "run.created token:" + operator_.id}))
      << events.body;
}

TEST_F(TokenApiTest, ATokenOfOneWorkspaceSeesNothingOfAnother) {
  const Token owner_a = token({{team_a_, "owner"}});
  auto listed = with(owner_a.secret, http::verb::get, "/api/v1/workspaces");
  ASSERT_EQ(listed.status, 200u) << listed.body;
  ASSERT_EQ(listed.obj().at("workspaces").as_array().size(), 1u) << listed.body;
  EXPECT_EQ(listed.obj().at("workspaces").as_array()[0].at("id"), team_a_.c_str());

  // Another Workspace's Capsule and one that does not exist are refused alike.
  const std::string unknown = "cap_00000000000000000000000000000000";
  auto other = with(owner_a.secret, http::verb::get, "/api/v1/capsules/" + capsule_b_);
  auto missing = with(owner_a.secret, http::verb::get, "/api/v1/capsules/" + unknown);
  expect_forbidden(other, "viewer");
  expect_forbidden(missing, "viewer");
  std::string other_text = other.body;
  other_text.replace(other_text.find(capsule_b_), capsule_b_.size(), unknown);
  EXPECT_EQ(other_text, missing.body);
  EXPECT_EQ(other.body.find(team_b_), std::string::npos) << other.body;

  for (const std::string& target :
       {"/api/v1/workspaces/" + team_b_, "/api/v1/workspaces/" + team_b_ + "/capsules",
        "/api/v1/workspaces/" + team_b_ + "/activity", "/api/v1/connections?workspaceId=" + team_b_,
        "/api/v1/capsules/" + capsule_b_ + "/runs", "/api/v1/output-shares?workspaceId=" + team_b_})
    expect_forbidden(with(owner_a.secret, http::verb::get, target), "viewer");
  expect_forbidden(with(owner_a.secret, http::verb::post,
                        "/api/v1/capsules/" + capsule_b_ + "/plan"), "operator");
  auto tokens = with(owner_a.secret, http::verb::get, "/api/v1/tokens");
  ASSERT_EQ(tokens.status, 200u) << tokens.body;
  EXPECT_EQ(tokens.obj().at("tokens").as_array().size(), 1u) << tokens.body;
  expect_forbidden(with(owner_a.secret, http::verb::post, "/api/v1/agent-pools",
                        json::object{{"name", "p"}, {"workspaces", json::array{"*"}}}),
                   "admin");

  // A refusal is audited by the token's id in its own Workspace, never in the one it reached for
  // (whose existence would show), and once a minute at most: the first stands for the rest.
  auto refusals = [&](const std::string& workspace) {
    auto activity = with(kApiToken, http::verb::get, "/api/v1/workspaces/" + workspace + "/activity");
    EXPECT_EQ(activity.status, 200u) << activity.body;
    std::vector<std::string> targets;
    for (const auto& e : activity.obj().at("events").as_array()) {
      const auto& o = e.as_object();
      if (o.at("action") != "token.refused") continue;
      EXPECT_EQ(o.at("actor"), ("token:" + owner_a.id).c_str());
      EXPECT_EQ(o.at("detail").at("tokenId"), owner_a.id.c_str());
      EXPECT_EQ(o.at("detail").at("method"), "GET");
      targets.push_back(std::string(o.at("detail").at("target").as_string()));
    }
    EXPECT_EQ(activity.body.find(owner_a.secret), std::string::npos);
    return targets;
  };
  EXPECT_TRUE(refusals(team_b_).empty());
  EXPECT_EQ(refusals(team_a_), (std::vector<std::string>{"capsule " + capsule_b_}));
}

TEST_F(TokenApiTest, RevokedAndExpiredTokensAreRefused) {
  const Token owner = token({{team_a_, "owner"}});
  auto short_lived = api(http::verb::post, "/api/v1/tokens",
                         json::object{{"name", "short"}, {"roles", json::object{{team_a_, "viewer"}}},
                                      {"expiresInSeconds", 60}});
  ASSERT_EQ(short_lived.status, 201u) << short_lived.body;
  const std::string capsule = "/api/v1/capsules/" + capsule_a_;
  EXPECT_EQ(with(short_lived.str("secret"), http::verb::get, capsule).status, 200u);
  clock_.advance(61);
  EXPECT_EQ(with(short_lived.str("secret"), http::verb::get, capsule).status, 401u);

  // The owner revokes a token it could have made; not one that reaches another Workspace.
  const Token other = token({{team_b_, "viewer"}});
  expect_forbidden(with(owner.secret, http::verb::post, "/api/v1/tokens/" + other.id + "/revoke"),
                   "owner");
  const Token viewer = token({{team_a_, "viewer"}}, owner.secret);
  auto revoked = with(owner.secret, http::verb::post, "/api/v1/tokens/" + viewer.id + "/revoke");
  ASSERT_EQ(revoked.status, 200u) << revoked.body;
  EXPECT_FALSE(revoked.obj().at("revokedAt").is_null());
  auto refused = with(viewer.secret, http::verb::get, capsule);
  EXPECT_EQ(refused.status, 401u) << refused.body;
  EXPECT_EQ(with("tkn_" + std::string(64, '0'), http::verb::get, capsule).status, 401u);

  auto bad_role = api(http::verb::post, "/api/v1/tokens",
                      json::object{{"name", "x"}, {"roles", json::object{{team_a_, "root"}}}});
  EXPECT_EQ(bad_role.status, 400u) << bad_role.body;
  auto no_workspace = api(http::verb::post, "/api/v1/tokens",
                          json::object{{"name", "x"}, {"roles", json::object{{"ws_nope", "viewer"}}}});
  EXPECT_EQ(no_workspace.status, 400u) << no_workspace.body;
}

TEST_F(TokenApiTest, ATokenNeverOutlivesTheTokenThatMadeIt) {
  auto parent = api(http::verb::post, "/api/v1/tokens",
                    json::object{{"name", "parent"}, {"roles", json::object{{team_a_, "owner"}}},
                                 {"expiresInSeconds", 600}});
  ASSERT_EQ(parent.status, 201u) << parent.body;
  auto child = with(parent.str("secret"), http::verb::post, "/api/v1/tokens",
                    json::object{{"name", "child"}, {"roles", json::object{{team_a_, "viewer"}}}});
  ASSERT_EQ(child.status, 201u) << child.body;
  EXPECT_EQ(child.obj().at("expiresAt"), parent.obj().at("expiresAt"));
  clock_.advance(601);
  EXPECT_EQ(with(child.str("secret"), http::verb::get, "/api/v1/capsules/" + capsule_a_).status,
            401u);
}

// An owner's offer tells nothing about the receiving Workspace: one it cannot read and one that
// does not exist answer alike. And one Workspace's owner cannot flood others with offers.
TEST_F(TokenApiTest, ShareOffersAnswerAlikeForUnknownAndUnreadableWorkspacesAndAreBounded) {
  const auto owner_a = token(json::object{{team_a_, "owner"}});
  const auto offer = [&](const std::string& to) {
    return with(owner_a.secret, http::verb::post, "/api/v1/output-shares",
                json::object{{"producerCapsuleId", capsule_a_}, {"toWorkspaceId", to},
                             {"outputs", json::array{"url"}}});
  };
  const std::string unknown = "ws_" + std::string(32, '0');
  auto to_b = offer(team_b_);
  auto to_unknown = offer(unknown);
  ASSERT_EQ(to_b.status, 201u) << to_b.body;
  ASSERT_EQ(to_unknown.status, 201u) << to_unknown.body;
  std::vector<std::string> keys_b, keys_unknown;
  for (const auto& kv : to_b.obj()) keys_b.emplace_back(kv.key());
  for (const auto& kv : to_unknown.obj()) keys_unknown.emplace_back(kv.key());
  EXPECT_EQ(keys_b, keys_unknown);
  EXPECT_EQ(to_b.str("status"), to_unknown.str("status"));
  // Both stay visible to the giving side as its pending offers; the unknown one is never approved.
  auto listed = with(owner_a.secret, http::verb::get, "/api/v1/output-shares?workspaceId=" + team_a_);
  ASSERT_EQ(listed.status, 200u) << listed.body;
  EXPECT_EQ(listed.obj().at("given").as_array().size(), 2u) << listed.body;
  for (std::int64_t n = 2; n < kMaxPendingOffers; ++n)
    ASSERT_EQ(offer("ws_" + std::string(28, '1') + std::to_string(1000 + n)).status, 201u) << n;
  auto flood = offer(unknown);
  EXPECT_EQ(flood.status, 409u) << flood.body;
  EXPECT_NE(flood.body.find("waiting for approval"), std::string::npos) << flood.body;
  // Its giver can take the offer to the unknown id back, and that makes room for a new one.
  auto revoked = with(owner_a.secret, http::verb::post,
                      "/api/v1/output-shares/" + to_unknown.str("id") + "/revoke");
  ASSERT_EQ(revoked.status, 200u) << revoked.body;
  EXPECT_EQ(revoked.str("status"), "revoked");
  EXPECT_EQ(offer(unknown).status, 201u);
}

}  // namespace
}  // namespace takosumi::controlplane