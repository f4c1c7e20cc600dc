// Agent names and signing keys over a real SQLite file: a name keeps its agent and its key; a new
// key needs an operator's reset that names it first.
#include "controlplane/store/agent_registry.hpp"

#include <gtest/gtest.h>

#include "common/error_codes.hpp"
#include "controlplane/testing/test_support.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/fake_clock.hpp"

using takosumi::testing::FakeClock;

namespace takosumi::controlplane {
namespace {

using takosumi::testing::TempDir;

AgentRegistration registration(std::string sign, std::string box = "box") {
  return {"worker", "1", {"linux"}, 1, std::move(box), std::move(sign)};
}

class AgentRegistryTest : public ::testing::Test {
 protected:
  TempDir dir_;
  Database db_ = testing::open_test_db(dir_.path() / "control.db");
  FakeClock clock_{1000};
  AgentRegistry agents_{db_, clock_};
};

TEST_F(AgentRegistryTest, SameKeyKeepsTheAgentIdAndReplacesTokenAndBoxKey) {
  auto first = agents_.register_agent(registration("sign-key"));
  auto again = agents_.register_agent(registration("sign-key", "box2"));
  ASSERT_TRUE(first && again);
  EXPECT_EQ(first->agent_id, again->agent_id);
  EXPECT_FALSE(again->keys_replaced);
  EXPECT_FALSE(agents_.authenticate(first->agent_token));
  auto agent = agents_.authenticate(again->agent_token);
  ASSERT_TRUE(agent);
  EXPECT_EQ(agent->box_public_key, "box2");
}

TEST_F(AgentRegistryTest, AnotherKeyForTheNameIsRefusedAndChangesNothing) {
  auto first = agents_.register_agent(registration("sign-key"));
  ASSERT_TRUE(first);
  auto other = agents_.register_agent(registration("other-sign-key", "attacker-box"));
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().code, errc::kAgentKeyMismatch);
  EXPECT_NE(other.error().message.find("/api/v1/agents/" + first->agent_id + "/reset-keys"),
            std::string::npos)
      << other.error().message;
  auto agent = agents_.authenticate(first->agent_token);
  ASSERT_TRUE(agent) << "the agent on record keeps its token";
  EXPECT_EQ(agent->box_public_key, "box");
  EXPECT_EQ(agent->sign_public_key, "sign-key");
}

TEST_F(AgentRegistryTest, ResetRevokesTheTokenAndAdmitsOnlyTheKeyItNames) {
  auto first = agents_.register_agent(registration("sign-key"));
  ASSERT_TRUE(first);
  auto reset = agents_.reset_keys(first->agent_id, "new-sign-key");
  ASSERT_TRUE(reset) << reset.error().to_string();
  EXPECT_EQ(reset->name, "worker");
  EXPECT_FALSE(agents_.authenticate(first->agent_token)) << "the old token is revoked at once";
  // Whoever holds the pool token comes first does not matter: only the named key gets in.
  for (const char* key : {"sign-key", "attacker-sign-key"}) {
    auto refused = agents_.register_agent(registration(key, "attacker-box"));
    ASSERT_FALSE(refused) << key;
    EXPECT_EQ(refused.error().code, errc::kAgentKeyMismatch);
    EXPECT_NE(refused.error().message.find("admits only the signing key new-sign-key"),
              std::string::npos) << refused.error().message;
  }

  auto renewed = agents_.register_agent(registration("new-sign-key", "new-box"));
  ASSERT_TRUE(renewed) << renewed.error().to_string();
  EXPECT_EQ(renewed->agent_id, first->agent_id);
  EXPECT_TRUE(renewed->keys_replaced);
  EXPECT_EQ(agents_.authenticate(renewed->agent_token)->box_public_key, "new-box");
  // The reset is used up: the new key is the one on record, any other is refused again.
  EXPECT_FALSE(agents_.register_agent(registration("third-sign-key")));
  EXPECT_FALSE(agents_.register_agent(registration("sign-key")));
  auto again = agents_.register_agent(registration("new-sign-key"));
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->keys_replaced);
}

TEST_F(AgentRegistryTest, AResetMayNameTheKeyOnRecordToRevokeOnlyTheToken) {
  auto first = agents_.register_agent(registration("sign-key"));
  ASSERT_TRUE(agents_.reset_keys(first->agent_id, "sign-key"));
  EXPECT_FALSE(agents_.authenticate(first->agent_token));
  auto back = agents_.register_agent(registration("sign-key"));
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(back->agent_id, first->agent_id);
  EXPECT_FALSE(back->keys_replaced);
}

TEST_F(AgentRegistryTest, ResettingAnUnknownAgentIsNotFound) {
  auto reset = agents_.reset_keys("agt_missing", "new-sign-key");
  ASSERT_FALSE(reset);
  EXPECT_EQ(reset.error().code, errc::kNotFound);
}

// Credentials with a lifetime (agentCredentialTtlSeconds = 100 here): rotated through the
// heartbeat after half of it; the replaced token counts only until its successor is first used.
class AgentCredentialTest : public ::testing::Test {
 protected:
  TempDir dir_;
  Database db_ = testing::open_test_db(dir_.path() / "control.db");
  FakeClock clock_{1000};
  AgentRegistry agents_{db_, clock_, 100};
};

TEST_F(AgentCredentialTest, TheHeartbeatRotatesAfterHalfTheLifetimeAndTheOldTokenEndsAtFirstUse) {
  auto cred = agents_.register_agent(registration("sign-key"));
  ASSERT_TRUE(cred);
  EXPECT_EQ(cred->expires_at, 1100);
  auto agent = agents_.authenticate(cred->agent_token);
  ASSERT_TRUE(agent);
  clock_.advance(49);
  auto early = agents_.heartbeat(*agent, cred->agent_token, 1);
  ASSERT_TRUE(early);
  EXPECT_FALSE(early->rotated);
  clock_.advance(1);
  auto due = agents_.heartbeat(*agent, cred->agent_token, 1);
  ASSERT_TRUE(due && due->rotated);
  EXPECT_EQ(due->rotated->expires_at, 1150);
  // Until the new token is used, the old one still counts (calls in flight).
  EXPECT_TRUE(agents_.authenticate(cred->agent_token));
  // The answer was lost: the old token asks again and gets another successor in its place.
  auto again = agents_.heartbeat(*agent, cred->agent_token, 1);
  ASSERT_TRUE(again && again->rotated);
  EXPECT_FALSE(agents_.authenticate(due->rotated->agent_token));
  // The first use of the successor retires the old token for good.
  ASSERT_TRUE(agents_.authenticate(again->rotated->agent_token));
  auto old = agents_.authenticate(cred->agent_token);
  ASSERT_FALSE(old);
  EXPECT_EQ(old.error().code, errc::kUnauthorized);
  auto replayed = agents_.heartbeat(*agent, cred->agent_token, 1);
  ASSERT_TRUE(replayed);
  EXPECT_FALSE(replayed->rotated);
}

TEST_F(AgentCredentialTest, ATokenPastItsLifetimeIsExpiredAndRegisteringAgainRenewsIt) {
  auto cred = agents_.register_agent(registration("sign-key"));
  ASSERT_TRUE(cred);
  clock_.advance(100);
  auto expired = agents_.authenticate(cred->agent_token);
  ASSERT_FALSE(expired);
  EXPECT_EQ(expired.error().code, errc::kAgentCredentialExpired);
  auto renewed = agents_.register_agent(registration("sign-key"));
  ASSERT_TRUE(renewed);
  EXPECT_TRUE(agents_.authenticate(renewed->agent_token));
}

TEST_F(AgentCredentialTest, RevocationOutranksAPendingResetAndANewName) {
  auto cred = agents_.register_agent(registration("sign-key"), {"config", "CN=worker"});
  ASSERT_TRUE(cred);
  ASSERT_TRUE(agents_.reset_keys(cred->agent_id, "new-key"));
  auto revoked = agents_.revoke(cred->agent_id);
  ASSERT_TRUE(revoked);
  EXPECT_TRUE(revoked->revoked_at);
  // The reset made before the revocation admits nothing.
  auto with_reset_key = agents_.register_agent(registration("new-key"));
  ASSERT_FALSE(with_reset_key);
  EXPECT_EQ(with_reset_key.error().code, errc::kAgentRevoked);
  // Nor does another name with the revoked key or certificate.
  AgentRegistration renamed = registration("sign-key");
  renamed.name = "worker-2";
  EXPECT_EQ(agents_.register_agent(renamed).error().code, errc::kAgentRevoked);
  AgentRegistration same_cert = registration("fresh-key");
  same_cert.name = "worker-3";
  EXPECT_EQ(agents_.register_agent(same_cert, {"config", "CN=worker"}).error().code,
            errc::kAgentRevoked);
  // A reset after the revocation is the way back.
  ASSERT_TRUE(agents_.reset_keys(cred->agent_id, "new-key"));
  auto back = agents_.register_agent(registration("new-key"), {"config", "CN=worker-new"});
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(back->agent_id, cred->agent_id);
}

TEST_F(AgentCredentialTest, AnAgentKeepsTheCertificateItRegisteredWith) {
  auto cred = agents_.register_agent(registration("sign-key"), {"config", "CN=worker"});
  ASSERT_TRUE(cred);
  EXPECT_EQ(agents_.authenticate(cred->agent_token, "CN=other").error().code,
            errc::kAgentCertificateMismatch);
  EXPECT_EQ(agents_.register_agent(registration("sign-key"), {"config", "CN=other"}).error().code,
            errc::kAgentCertificateMismatch);
  EXPECT_TRUE(agents_.authenticate(cred->agent_token, "CN=worker"));
}

}  // namespace
}  // namespace takosumi::controlplane
