// Registration proves possession of the agent's signing key, over the real control plane on
// loopback: a public key alone, a replayed or expired challenge, or a signature made for another
// name or control plane registers nothing; the agent itself re-registers (a restart) and keeps its
// id; a new key for a name needs an operator's reset that names the key, which is audited.
#include "controlplane/store/audit_log.hpp"
#include "controlplane/testing/http_api_fixture.hpp"
#include "controlplane/store/registration_challenges.hpp"

namespace takosumi::controlplane {
namespace {

class AgentIdentityTest : public HttpApiTest {
 protected:
  // The agent's token still works: a claim is answered.
  unsigned claim_status(const std::string& token) {
    return send(http::verb::post, "/agent/v1/claim",
                json::serialize(json::object{{"freeSlots", 1}, {"waitSeconds", 0}}),
                {{"authorization", "Bearer " + token}})
        .status;
  }

  // The audit events of one action, read straight from the database.
  std::vector<std::pair<std::string, json::object>> audit(const std::string& action) {
    Database db = open_store_db();
    std::vector<std::pair<std::string, json::object>> out;
    auto s = db.query("SELECT actor, detail FROM audit_events WHERE action = ? ORDER BY id", action);
    EXPECT_TRUE(s);
    while (s && s->step().value_or(false))
      out.emplace_back(s->text(0), json::parse(s->text(1)).as_object());
    return out;
  }

  std::string doomed_plan(const std::string& workspace);

  void expect_error(const Reply& r, unsigned status, std::string_view code) {
    EXPECT_EQ(r.status, status) << r.body;
    EXPECT_EQ(error_code(r), code) << r.body;
  }

  crypto::SignKeyPair other_sign_ = crypto::SignKeyPair::generate();
  crypto::BoxKeyPair other_box_ = crypto::BoxKeyPair::generate();
};

TEST_F(AgentIdentityTest, TheAgentReRegistersWithItsKeyAndKeepsItsId) {
  register_agent();
  const std::string first_id = agent_id_;
  const std::string first_token = agent_token_;
  // A restart: same key, a fresh challenge; the box key may change under the same proof.
  box_ = crypto::BoxKeyPair::generate();
  register_agent();
  EXPECT_EQ(agent_id_, first_id);
  EXPECT_EQ(claim_status(agent_token_), 200u);
  EXPECT_EQ(claim_status(first_token), 401u);
  ASSERT_EQ(audit("agent.registered").size(), 2u);
  EXPECT_EQ(audit("agent.registered")[1].second.at("keysReplaced"), json::value(false));
}

TEST_F(AgentIdentityTest, ThePublicKeyAloneCannotTakeOverAName) {
  register_agent();
  // The attacker knows the pool token and the agent's public signing key, not its private key:
  // it presents that key with its own box key and signs with what it has.
  auto claim = honest_claim("worker-1", sign_, other_box_);
  expect_error(send_registration(registration_body(claim, other_sign_)), 401,
               "registration_signature_invalid");
  auto unsigned_body = registration_body(honest_claim("worker-1", sign_, other_box_), other_sign_);
  unsigned_body["signature"] = "";
  expect_error(send_registration(unsigned_body), 401, "registration_signature_invalid");
  // Its own key under the name is refused with a code that says what to do.
  auto r = send_registration(registration_body(honest_claim("worker-1", other_sign_, other_box_),
                                               other_sign_));
  expect_error(r, 409, "agent_key_mismatch");
  EXPECT_NE(r.body.find("/api/v1/agents/" + agent_id_ + "/reset-keys"), std::string::npos) << r.body;
  EXPECT_EQ(claim_status(agent_token_), 200u) << "the real agent keeps its token";
  EXPECT_EQ(audit("agent.registered").size(), 1u);
}

TEST_F(AgentIdentityTest, AChallengeServesOneRegistration) {
  const auto body = registration_body(honest_claim("worker-1", sign_, box_), sign_);
  auto first = send_registration(body);
  ASSERT_EQ(first.status, 200u) << first.body;
  expect_error(send_registration(body), 401, "registration_challenge_invalid");
  EXPECT_EQ(claim_status(first.str("agentToken")), 200u) << "the replay rotated no token";
  // A challenge that was never issued is refused the same way.
  auto claim = honest_claim("worker-1", sign_, box_);
  claim.challenge = std::string(64, '0');
  expect_error(send_registration(registration_body(claim, sign_)), 401,
               "registration_challenge_invalid");
}

TEST_F(AgentIdentityTest, ASignatureForAnotherNameIsRefused) {
  auto body = registration_body(honest_claim("worker-2", sign_, box_), sign_);
  body["name"] = "worker-1";
  expect_error(send_registration(body), 401, "registration_signature_invalid");
  EXPECT_TRUE(audit("agent.registered").empty());
}

TEST_F(AgentIdentityTest, ASignatureForAnotherControlPlaneIsRefused) {
  auto claim = honest_claim("worker-1", sign_, box_);
  claim.control_signing_key = crypto::SignKeyPair::generate().public_key;
  auto r = send_registration(registration_body(claim, sign_));
  expect_error(r, 401, "registration_signature_invalid");
  EXPECT_NE(r.body.find("pinned"), std::string::npos) << r.body;
}

TEST_F(AgentIdentityTest, AnExpiredChallengeIsRefused) {
  auto claim = honest_claim("worker-1", sign_, box_);
  clock_.advance(RegistrationChallenges::kLifetimeSeconds);
  auto r = send_registration(registration_body(claim, sign_));
  expect_error(r, 401, "registration_challenge_invalid");
  EXPECT_NE(r.body.find("expired"), std::string::npos) << r.body;
}

TEST_F(AgentIdentityTest, ChallengesNeedThePoolTokenAndRegistrationsASignature) {
  auto r = send(http::verb::post, "/agent/v1/register/challenge", "{}",
                {{"authorization", "Bearer guess"}});
  expect_error(r, 401, "unauthorized");
  // An agent from before signed registration gets a 400 that says to upgrade it.
  auto old = registration_body(honest_claim("worker-1", sign_, box_), sign_);
  old.erase("challenge");
  old.erase("signature");
  r = send_registration(old);
  expect_error(r, 400, "invalid_argument");
  EXPECT_NE(r.body.find("upgrade"), std::string::npos) << r.body;
}

TEST_F(AgentIdentityTest, AnOperatorResetAdmitsTheKeyItNamesAndIsAudited) {
  register_agent();
  const std::string id = agent_id_;
  const std::string old_token = agent_token_;
  const std::string reset_path = "/api/v1/agents/" + id + "/reset-keys";
  const json::object reset_body{{"signPublicKey", other_sign_.public_key.to_base64()}};
  const auto new_key_body = [&] {
    return registration_body(honest_claim("worker-1", other_sign_, other_box_), other_sign_);
  };
  auto refused = send_registration(new_key_body());
  expect_error(refused, 409, "agent_key_mismatch");
  EXPECT_NE(refused.body.find(other_sign_.public_key.to_base64()), std::string::npos)
      << "the refusal names the key to admit: " << refused.body;
  EXPECT_EQ(send(http::verb::post, reset_path, json::serialize(reset_body), {}).status, 401u)
      << "needs the API token";
  EXPECT_EQ(api(http::verb::post, "/api/v1/agents/agt_unknown/reset-keys", reset_body).status, 404u);
  auto reset = api(http::verb::post, reset_path, reset_body);
  ASSERT_EQ(reset.status, 200u) << reset.body;
  EXPECT_EQ(reset.str("agentId"), id);
  EXPECT_EQ(reset.str("signPublicKey"), other_sign_.public_key.to_base64());
  EXPECT_EQ(claim_status(old_token), 401u) << "a reset signs the old key's holder out";
  expect_error(send_registration(registration_body(honest_claim("worker-1", sign_, box_), sign_)),
               409, "agent_key_mismatch");

  auto renewed = send_registration(new_key_body());
  ASSERT_EQ(renewed.status, 200u) << renewed.body;
  EXPECT_EQ(renewed.str("agentId"), id) << "the agent keeps its id and its Runs";
  EXPECT_EQ(claim_status(renewed.str("agentToken")), 200u);

  auto resets = audit("agent.keys_reset");
  ASSERT_EQ(resets.size(), 1u);
  EXPECT_EQ(resets[0].first, kAdminActor);
  EXPECT_EQ(resets[0].second.at("agentId"), json::value(id));
  EXPECT_EQ(resets[0].second.at("signPublicKey"), json::value(sign_.public_key.to_base64()));
  EXPECT_EQ(resets[0].second.at("newSignPublicKey"),
            json::value(other_sign_.public_key.to_base64()));
  auto registrations = audit("agent.registered");
  ASSERT_EQ(registrations.size(), 2u);
  EXPECT_EQ(registrations[1].first, agent_actor(id));
  EXPECT_EQ(registrations[1].second.at("keysReplaced"), json::value(true));
}

// The pool token is shared by every agent host: after a reset, whoever holds it and registers
// first with its own key must not become the agent.
TEST_F(AgentIdentityTest, AfterAResetAPoolTokenHolderWithAnotherKeyIsRefused) {
  register_agent();
  const auto intended = crypto::SignKeyPair::generate();
  ASSERT_EQ(api(http::verb::post, "/api/v1/agents/" + agent_id_ + "/reset-keys",
                json::object{{"signPublicKey", intended.public_key.to_base64()}})
                .status,
            200u);
  auto taken = send_registration(
      registration_body(honest_claim("worker-1", other_sign_, other_box_), other_sign_));
  expect_error(taken, 409, "agent_key_mismatch");
  EXPECT_NE(taken.body.find(intended.public_key.to_base64()), std::string::npos) << taken.body;
  auto renewed =
      send_registration(registration_body(honest_claim("worker-1", intended, box_), intended));
  ASSERT_EQ(renewed.status, 200u) << renewed.body;
  EXPECT_EQ(renewed.str("agentId"), agent_id_);
  EXPECT_EQ(audit("agent.registered").size(), 2u) << "the refused registration left no trace";
}

TEST_F(AgentIdentityTest, AResetNamesTheNewKeyInAStrictBody) {
  register_agent();
  const std::string reset_path = "/api/v1/agents/" + agent_id_ + "/reset-keys";
  const std::string key = other_sign_.public_key.to_base64();
  const std::vector<std::string> bodies{
       std::string("{}"), std::string(""), R"({"signPublicKey": "not base64!"})",
        R"({"signPublicKey": ")" + std::string(60, 'A') + R"("})",
        R"({"signPublicKey": ")" + key + R"(", "force": true})",
        R"({"signPublicKey": ")" + key + R"(", "signPublicKey": ")" + key + R"("})"};
  for (const auto& body : bodies) {
    auto r = send(http::verb::post, reset_path, body,
                  {{"authorization", std::string("Bearer ") + kApiToken}});
    expect_error(r, 400, "invalid_argument");
  }
  EXPECT_EQ(claim_status(agent_token_), 200u) << "a refused reset changes nothing";
  EXPECT_TRUE(audit("agent.keys_reset").empty());
}

// A queued plan of a Capsule whose Connection was revoked since: the next claim pass fails it
// (connection_revoked), which shows from outside that a poll has made its first pass.
std::string AgentIdentityTest::doomed_plan(const std::string& workspace) {
  auto conn = api(http::verb::post, "/api/v1/connections",
                  json::object{{"workspaceId", workspace}, {"name", "aws"},
                               {"provider", "registry.opentofu.org/hashicorp/aws"},
                               {"authMode", "env"}, {"values", {{"AWS_ACCESS_KEY_ID", "AKIA"}}}});
  EXPECT_EQ(conn.status, 201u) << conn.body;
  json::object body{{"name", "doomed"}, {"connections", json::array{conn.str("id").c_str()}},
                    {"source", json::object{{"gitUrl", "file:///unused"},
                                            {"ref", std::string(40, 'c')}}}};
  auto capsule = api(http::verb::post, "/api/v1/workspaces/" + workspace + "/capsules", body);
  EXPECT_EQ(capsule.status, 201u) << capsule.body;
  auto plan = api(http::verb::post, "/api/v1/capsules/" + capsule.str("id") + "/plan");
  EXPECT_EQ(plan.status, 201u) << plan.body;
  EXPECT_EQ(api(http::verb::post, "/api/v1/connections/" + conn.str("id") + "/revoke").status, 200u);
  return plan.str("id");
}

TEST_F(AgentIdentityTest, AResetCutsOffALongPollAlreadyWaiting) {
  register_agent();
  const std::string old_token = agent_token_;
  const std::string workspace = create_workspace();
  const std::string doomed = doomed_plan(workspace);
  const std::string capsule = create_capsule(workspace, "app");
  Reply polled;
  std::thread poll([&] {
    polled = send(http::verb::post, "/agent/v1/claim",
                  json::serialize(json::object{{"freeSlots", 1}, {"waitSeconds", 30}}),
                  {{"authorization", "Bearer " + old_token}});
  });
  // The poll's first pass failed the doomed plan and found nothing else: it is parked now.
  bool parked = false;
  for (int i = 0; i < 3000 && !parked; ++i) {
    parked = api(http::verb::get, "/api/v1/runs/" + doomed).str("status") == "failed";
    if (!parked) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(parked);
  ASSERT_EQ(api(http::verb::post, "/api/v1/agents/" + agent_id_ + "/reset-keys",
                json::object{{"signPublicKey", other_sign_.public_key.to_base64()}})
                .status,
            200u);
  auto plan = api(http::verb::post, "/api/v1/capsules/" + capsule + "/plan");  // wakes the poll
  EXPECT_EQ(plan.status, 201u) << plan.body;
  poll.join();
  expect_error(polled, 401, "unauthorized");

  // The Run waits for the agent with its new key, sealed to its new box key.
  sign_ = std::move(other_sign_);
  box_ = std::move(other_box_);
  register_agent();
  auto [job, manifest] = claim();
  EXPECT_EQ(manifest.run_id, plan.str("id"));
}

}  // namespace
}  // namespace takosumi::controlplane
