// Claims on two replicas of one PostgreSQL store at the same moment: they run side by side (a
// claim shares the writers' lock with other claims), each locks the Capsule it leases from so the
// other passes over it, and every other writer still waits for a claim in progress.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "controlplane/testing/run_queue_fixture.hpp"

namespace takosumi::controlplane {
namespace {

// A second control-plane replica: its own connection to the fixture's database and its own stores.
struct Replica {
  explicit Replica(const PostgresSettings& settings, const Clock& clock)
      : db(open(settings)), catalog{db, clock}, runs{db, clock}, states{db, clock},
        connections{db, keys, clock}, audit{db, clock},
        queue{db, catalog, runs, states, connections, audit, clock, 60} {}

  static Database open(const PostgresSettings& settings) {
    auto db = Database::connect_postgres(settings);
    if (!db) throw std::runtime_error(db.error().to_string());
    // A writer that waited for the other replica's claim would wait out the default 30 s: the
    // test fails sooner and says so.
    if (auto set = db->exec("SET lock_timeout = '2s'"); !set)
      throw std::runtime_error(set.error().to_string());
    return std::move(*db);
  }

  Database db;
  Keyring keys{crypto::BoxKeyPair::generate(), crypto::SignKeyPair::generate()};
  CatalogStore catalog;
  RunStore runs;
  StateStore states;
  ConnectionStore connections;
  AuditLog audit;
  RunQueue queue;
};

class ClaimRowLocksTest : public RunQueueTest {
 protected:
  ClaimRowLocksTest() { EXPECT_TRUE(postgres_) << "a PostgreSQL-only test"; }

  // Claims one Run for agent_a_ on this replica and runs `meanwhile` while that claim's
  // transaction is open (from the manifest's build, after the Run is leased).
  Job claim_while(const std::function<void()>& meanwhile) {
    const ManifestFactory build = [&](const ClaimedRun& c) -> Result<protocol::SignedManifest> {
      meanwhile();
      return protocol::SignedManifest{"manifest-of-" + c.run.id, "signature"};
    };
    auto jobs = queue_.claims().claim(agent_a_, 1, build);
    EXPECT_TRUE(jobs) << jobs.error().to_string();
    EXPECT_EQ(jobs ? jobs->size() : 0, 1u);
    return jobs && !jobs->empty() ? std::move(jobs->front()) : Job{};
  }

  Replica other_{*postgres_, clock_};
};

TEST_F(ClaimRowLocksTest, ClaimsOnTwoReplicasRunSideBySideAndNeverLeaseTwoRunsOfOneCapsule) {
  const Capsule one = capsule("one");
  const Capsule two = capsule("two");
  const Run first = plan(one);
  const Run second = plan(one);  // waits behind `first`: one lease per Capsule
  const Run other = plan(two);

  Result<std::vector<Job>> theirs = std::vector<Job>{};
  const Job mine = claim_while([&] { theirs = other_.queue.claims().claim(agent_b_, 2, build_); });
  EXPECT_EQ(mine.claimed.run.id, first.id);
  ASSERT_TRUE(theirs) << "the other replica's claim waited for this one: "
                      << theirs.error().to_string();
  ASSERT_EQ(theirs->size(), 1u)
      << "the other replica took a second Run of the Capsule this claim was leasing";
  EXPECT_EQ(theirs->front().claimed.run.id, other.id);

  EXPECT_EQ(runs_.get_run(first.id)->agent_id, agent_a_.id);
  EXPECT_EQ(runs_.get_run(other.id)->agent_id, agent_b_.id);
  EXPECT_EQ(runs_.get_run(second.id)->status, run_status::kQueued);
  auto later = other_.queue.claims().claim(agent_b_, 2, build_);
  ASSERT_TRUE(later) << later.error().to_string();
  EXPECT_TRUE(later->empty()) << "the Capsule's lease, now committed, holds it on every replica";
}

// The race the second read of a locked Capsule exists for: a claim's locking statement takes its
// snapshot, another replica's claim leases a Run of the Capsule and commits, and only then does
// the first reach the Capsule's row and lock it. The lock is taken on a row nobody changed, so
// PostgreSQL checks nothing again: the statement returns the Run the other claim just leased.
// The test holds the other replica's claim at exactly that point: the label match calls
// takosumi_instr for each required label, and here that function first waits for an advisory
// lock the test holds, in that replica's session and only inside a claim.
TEST_F(ClaimRowLocksTest, AClaimWhoseSnapshotPredatesAnotherClaimsLeaseTakesNothingOfThatCapsule) {
  auto gate = Replica::open(*postgres_);
  ASSERT_TRUE(gate.exec(
      "CREATE OR REPLACE FUNCTION takosumi_instr(haystack text, needle text) RETURNS integer"
      " LANGUAGE plpgsql VOLATILE AS $$ BEGIN"
      "  IF current_setting('takosumi_test.hold', true) = 'on' AND EXISTS (SELECT 1 FROM pg_locks"
      "     WHERE pid = pg_backend_pid() AND locktype = 'advisory' AND mode = 'ShareLock') THEN"
      "    PERFORM pg_advisory_xact_lock_shared(42);"
      "  END IF;"
      "  RETURN strpos(haystack, needle);"
      " END $$"));
  ASSERT_TRUE(gate.exec("SELECT pg_advisory_lock(42)"));
  ASSERT_TRUE(other_.db.exec("SET takosumi_test.hold = 'on'; SET lock_timeout = '120s'"));
  auto gpu_agent = [&](const std::string& name) {
    auto cred = agents_.register_agent({name, "0.1.0", {"gpu"}, 2, "box-" + name, "sign-" + name});
    EXPECT_TRUE(cred) << cred.error().to_string();
    return *agents_.authenticate(cred->agent_token);
  };
  const Agent here = gpu_agent("gpu-here");
  const Agent there = gpu_agent("gpu-there");
  Capsule trainer = capsule("trainer");
  ASSERT_TRUE(catalog_.set_agent_requirements(trainer.id, {"default", {"gpu"}}));
  trainer = *catalog_.get_capsule(trainer.id);
  const Run first = plan(trainer);

  Result<std::vector<Job>> theirs = std::vector<Job>{};
  std::thread held([&] { theirs = other_.queue.claims().claim(there, 2, build_); });
  // Until the other replica's claim waits at the gate, inside its locking statement.
  for (int i = 0;; ++i) {
    auto waiting = gate.single_integer(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 42 AND NOT granted");
    ASSERT_TRUE(waiting) << waiting.error().to_string();
    if (*waiting > 0) break;
    if (i == 6000) {
      (void)gate.exec("SELECT pg_advisory_unlock(42)");
      held.join();
      FAIL() << "the other replica's claim never reached the label match inside its transaction";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  auto mine = queue_.claims().claim(here, 1, build_);
  ASSERT_TRUE(gate.exec("SELECT pg_advisory_unlock(42)"));
  held.join();
  ASSERT_TRUE(mine) << mine.error().to_string();
  ASSERT_EQ(mine->size(), 1u);
  EXPECT_EQ(mine->front().claimed.run.id, first.id);
  ASSERT_TRUE(theirs) << theirs.error().to_string();
  EXPECT_TRUE(theirs->empty()) << "the Run leased by the other claim was leased a second time";
  const Run after = *runs_.get_run(first.id);
  EXPECT_EQ(after.agent_id, here.id);
  EXPECT_EQ(after.attempt, 1);
}

TEST_F(ClaimRowLocksTest, EveryOtherWriterWaitsForAClaimInProgress) {
  const Capsule one = capsule("one");
  plan(one);
  Result<Run> queued = Run{};
  Status cancelled;
  const Job mine = claim_while([&] {
    queued = other_.runs.create_plan(one, std::string(40, 'b'));
    cancelled = other_.db.run("UPDATE runs SET cancel_requested = 1");
  });
  ASSERT_FALSE(queued) << "a Run was queued beside a claim in progress";
  EXPECT_EQ(queued.error().code, errc::kUnavailable) << queued.error().to_string();
  EXPECT_NE(queued.error().message.find("lock timeout"), std::string::npos)
      << queued.error().to_string();
  ASSERT_FALSE(cancelled) << "a write outside a transaction went beside a claim in progress";
  EXPECT_EQ(cancelled.error().code, errc::kUnavailable) << cancelled.error().to_string();

  // Once the claim is committed, they go through.
  ASSERT_TRUE(other_.runs.create_plan(one, std::string(40, 'b')));
  EXPECT_FALSE(runs_.get_run(mine.claimed.run.id)->cancel_requested);
}

TEST_F(ClaimRowLocksTest, AnExclusiveWriterInsideAClaimIsRefused) {
  Transaction claim(db_, WriterLock::claim);
  ASSERT_TRUE(claim.begun());
  EXPECT_TRUE(db_.in_shared_claim());
  Transaction nested(db_);
  ASSERT_FALSE(nested.begun());
  EXPECT_EQ(nested.begun().error().code, errc::kInternal);
  Transaction nested_claim(db_, WriterLock::claim);
  EXPECT_TRUE(nested_claim.begun());
}

}  // namespace
}  // namespace takosumi::controlplane
