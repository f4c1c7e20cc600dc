// The lease check as pure predicates over a Run: who holds it, for which attempt, in which status.
#include "controlplane/runs/lease.hpp"

#include <gtest/gtest.h>

#include "common/error_codes.hpp"
#include "crypto/random_ids.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::controlplane {
namespace {

Run leased_run() {
  Run run;
  run.id = "run_1";
  run.status = std::string(run_status::kRunning);
  run.attempt = 2;
  run.agent_id = "agt_a";
  run.lease_token_sha256 = crypto::token_sha256("token-a");
  run.lease_expires_at = 100;
  return run;
}

TEST(LeaseTest, OnlyTheAgentWithTheTokenOfTheCurrentAttemptHoldsTheLease) {
  const controlplane::Run run = leased_run();
  EXPECT_TRUE(holds_lease(run, {"agt_a", "token-a"}));
  EXPECT_TRUE(holds_lease(run, {"agt_a", "token-a", 2}));
  EXPECT_FALSE(holds_lease(run, {"agt_a", "token-a", 1}));
  EXPECT_FALSE(holds_lease(run, {"agt_b", "token-a"}));
  EXPECT_FALSE(holds_lease(run, {"agt_a", "token-b"}));
}

TEST(LeaseTest, AnExpiredLeaseIsStillHeldButNotLive) {
  const controlplane::Run run = leased_run();
  EXPECT_TRUE(lease_live(run, 99));
  EXPECT_FALSE(lease_live(run, 100));
  EXPECT_TRUE(holds_lease(run, {"agt_a", "token-a"}));
}

TEST(LeaseTest, AFinishedRunHasNoHolderButKeepsItsLastLease) {
  controlplane::Run run = leased_run();
  run.status = std::string(run_status::kCancelled);
  EXPECT_FALSE(holds_lease(run, {"agt_a", "token-a"}));
  EXPECT_TRUE(is_lease_of(run, {"agt_a", "token-a"}));
  EXPECT_FALSE(cancelled_while_stranded(run));
  run.apply_started_attempt = 2;
  EXPECT_TRUE(cancelled_while_stranded(run));
}

TEST(LeaseTest, TheRefusalIsLeaseLost) {
  EXPECT_EQ(lease_lost("run_1").error().code, errc::kLeaseLost);
}

}  // namespace
}  // namespace takosumi::controlplane
