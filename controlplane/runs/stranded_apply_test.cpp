// Crash safety in the queue: the apply phase announcement, stranded applies (never handed to
// another agent, holding their Capsule), partial StateVersions, the attention they raise, and the
// audit of fenced calls. Real SQLite, FakeClock.
#include <gtest/gtest.h>

#include <algorithm>

#include "controlplane/runs/capsule_attention.hpp"
#include "controlplane/testing/run_queue_fixture.hpp"
#include "common/failure_codes.hpp"
#include "tests/support/fake_clock.hpp"

using takosumi::testing::FakeClock;

namespace takosumi::controlplane {
namespace {

class StrandedApplyTest : public RunQueueTest {
 protected:
  // An apply Run of the Capsule, claimed by agent_a_ at attempt 1 (plans first when needed).
  Job claimed_apply(const Capsule& c) {
    auto apply = create_apply(succeeded_plan(c));
    EXPECT_TRUE(apply) << apply.error().to_string();
    Job job = claim_one(agent_a_);
    EXPECT_EQ(job.claimed.run.id, apply ? apply->id : "");
    return job;
  }

  Result<LeaseRenewal> start(const Job& job, const Agent& agent) {
    return queue_.leases().start_apply(job.claimed.run.id, agent, job.claimed.lease_token,
                              job.claimed.run.attempt);
  }

  // The report of an agent restarted after it was killed during `tofu apply`: failed with
  // interrupted, carrying the state tofu had persisted.
  protocol::RunReport interrupted(const Job& job, std::int64_t prior_generation,
                                  const std::string& sha = std::string(64, 'f')) {
    EXPECT_TRUE(runs_.record_artifact(job.claimed.run.id, "state", sha, 10));
    auto r = report(job, "failed");
    r.failure_code = errc::kInterrupted;
    r.failure_message = "the agent stopped during tofu apply";
    r.new_state =
        protocol::NewStateDescriptor{sha, std::string(64, 'p'), 4, "lineage-1", prior_generation};
    r.outputs = json::object{{"url", "https://half-done"}};
    return r;
  }

  std::vector<AuditEvent> events(const std::string& run_id, const std::string& action) {
    auto all = *audit_.list(workspace_id_, 200, std::nullopt);
    std::vector<AuditEvent> out;
    for (auto& e : all)
      if (e.run_id == run_id && e.action == action) out.push_back(std::move(e));
    return out;
  }

  std::vector<Attention> attention(const Capsule& c) {
    auto a = load_capsule_attention(stores(), c, clock_.now_unix());
    EXPECT_TRUE(a) << a.error().to_string();
    return a ? *a : std::vector<Attention>{};
  }
};

TEST_F(StrandedApplyTest, StartApplyRecordsTheAttemptRenewsTheLeaseAndIsIdempotent) {
  Job job = claimed_apply(capsule("one"));
  const std::string id = job.claimed.run.id;
  clock_.advance(30);
  auto started = start(job, agent_a_);
  ASSERT_TRUE(started) << started.error().to_string();
  EXPECT_EQ(started->lease_expires_at, clock_.now_unix() + 60);
  EXPECT_FALSE(started->cancel_requested);
  auto run = *runs_.get_run(id);
  EXPECT_EQ(run.apply_started_attempt, 1);
  EXPECT_EQ(run.lease_expires_at, clock_.now_unix() + 60);
  EXPECT_TRUE(run.apply_started());
  EXPECT_FALSE(run.stranded(clock_.now_unix()));

  clock_.advance(5);
  auto again = start(job, agent_a_);  // a retry after a lost answer
  ASSERT_TRUE(again) << again.error().to_string();
  EXPECT_EQ(again->lease_expires_at, clock_.now_unix() + 60);
  auto recorded = events(id, "run.apply_started");
  ASSERT_EQ(recorded.size(), 1u) << "a repeat is not a second announcement";
  EXPECT_EQ(recorded[0].actor, "agent:" + agent_a_.id);
  EXPECT_EQ(recorded[0].detail, (json::object{{"agentId", agent_a_.id}, {"attempt", 1}}));
}

TEST_F(StrandedApplyTest, StrandedApplyIsNeverClaimedAgainAndHoldsItsCapsule) {
  Capsule c = capsule("one");
  Job job = claimed_apply(c);
  ASSERT_TRUE(start(job, agent_a_));
  Run later = plan(c);
  Run elsewhere = plan(capsule("two"));
  clock_.advance(61);
  EXPECT_TRUE(runs_.get_run(job.claimed.run.id)->stranded(clock_.now_unix()));

  auto jobs = claim(agent_b_, 2);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].claimed.run.id, elsewhere.id) << "other Capsules go on";
  ASSERT_TRUE(queue_.completion().complete(elsewhere.id, agent_b_, report(jobs[0])));
  // Long past kMaxAttempts leases: the apply is never re-dispatched nor failed, the plan waits.
  for (int i = 0; i < kMaxAttempts + 2; ++i) {
    clock_.advance(61);
    EXPECT_TRUE(claim(agent_b_, 2).empty());
  }
  auto stranded = *runs_.get_run(job.claimed.run.id);
  EXPECT_EQ(stranded.status, run_status::kRunning);
  EXPECT_EQ(stranded.attempt, 1);
  EXPECT_EQ(stranded.agent_id, agent_a_.id);
  EXPECT_EQ(runs_.get_run(later.id)->status, run_status::kQueued);
  EXPECT_TRUE(events(job.claimed.run.id, "run.lease_expired").empty());
}

TEST_F(StrandedApplyTest, ApplyStrandedAtTheLastAttemptIsNotFailedForItsLeases) {
  Capsule c = capsule("one");
  ASSERT_TRUE(create_apply(succeeded_plan(c)));
  Job job = claim_one(agent_a_);
  for (int i = 1; i < kMaxAttempts; ++i) {  // leases that expired before any apply started
    clock_.advance(61);
    job = claim_one(agent_a_);
  }
  ASSERT_EQ(job.claimed.run.attempt, kMaxAttempts);
  ASSERT_TRUE(start(job, agent_a_));  // the last attempt announces in time
  clock_.advance(61);
  EXPECT_TRUE(claim(agent_b_).empty());
  auto run = *runs_.get_run(job.claimed.run.id);
  EXPECT_EQ(run.status, run_status::kRunning);
  EXPECT_FALSE(run.failure_code);
}

TEST_F(StrandedApplyTest, OriginalAgentReportsAStrandedApplyAsAPartialStateVersion) {
  Capsule c = capsule("one");
  ASSERT_TRUE(finish_apply(claimed_apply(c), 0, {{"url", "https://app"}}));  // generation 1
  Job job = claimed_apply(c);
  ASSERT_TRUE(start(job, agent_a_));
  Run waiting = plan(c);
  clock_.advance(600);  // the agent was killed; its lease ran out long ago
  EXPECT_TRUE(claim(agent_b_).empty());

  auto stuck = attention(c);
  ASSERT_EQ(stuck.size(), 1u);
  EXPECT_EQ(stuck[0].code, attention_code::kApplyStranded);
  EXPECT_EQ(stuck[0].run_id, job.claimed.run.id);
  EXPECT_EQ(stuck[0].agent_id, agent_a_.id);

  // Restarted, the agent renews its old lease and reports what tofu persisted.
  ASSERT_TRUE(queue_.leases().heartbeat(job.claimed.run.id, agent_a_, job.claimed.lease_token));
  clock_.advance(120);
  ASSERT_TRUE(queue_.completion().complete(job.claimed.run.id, agent_a_, interrupted(job, 1)));

  auto done = *runs_.get_run(job.claimed.run.id);
  EXPECT_EQ(done.status, run_status::kFailed);
  EXPECT_EQ(done.failure_code, errc::kInterrupted);
  auto current = **states_.current(c.id);
  EXPECT_EQ(current.generation, 2);
  EXPECT_TRUE(current.partial);
  EXPECT_EQ(done.state_version_id, current.id);
  EXPECT_EQ(states_.outputs(c.id)->outputs.at("url"), "https://app")
      << "a failed apply sets no Outputs";
  EXPECT_FALSE((*states_.list(c.id, 1, 2))[0].partial);
  auto created = events(job.claimed.run.id, "state_version.created");
  ASSERT_EQ(created.size(), 1u);
  EXPECT_EQ(created[0].detail.at("partial"), true);

  auto kept = attention(c);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].code, attention_code::kPartialState);
  EXPECT_EQ(kept[0].state_version_id, current.id);
  EXPECT_EQ(kept[0].generation, 2);
  EXPECT_EQ(kept[0].run_id, job.claimed.run.id);
  EXPECT_NE(kept[0].message.find("(interrupted)"), std::string::npos) << kept[0].message;

  // The Capsule is free again; the next plan starts from the kept state.
  Job next = claim_one(agent_b_);
  EXPECT_EQ(next.claimed.run.id, waiting.id);
  ASSERT_TRUE(next.claimed.prior_state);
  EXPECT_EQ(next.claimed.prior_state->id, current.id);
}

TEST_F(StrandedApplyTest, ASucceededApplyAfterAPartialOneClearsTheAttention) {
  Capsule c = capsule("one");
  Job job = claimed_apply(c);
  ASSERT_TRUE(start(job, agent_a_));
  ASSERT_TRUE(queue_.completion().complete(job.claimed.run.id, agent_a_, interrupted(job, 0)));
  ASSERT_EQ(attention(c).size(), 1u);

  Job next = claimed_apply(c);
  ASSERT_TRUE(start(next, agent_a_));
  ASSERT_TRUE(finish_apply(next, 1));
  auto current = **states_.current(c.id);
  EXPECT_EQ(current.generation, 2);
  EXPECT_FALSE(current.partial);
  EXPECT_TRUE(attention(c).empty());
  auto created = events(next.claimed.run.id, "state_version.created");
  ASSERT_EQ(created.size(), 1u);
  EXPECT_EQ(created[0].detail.at("partial"), false);
}

TEST_F(StrandedApplyTest, StartApplyNeedsTheCurrentLiveLease) {
  Job job = claimed_apply(capsule("one"));
  const std::string id = job.claimed.run.id;
  EXPECT_EQ(queue_.leases().start_apply(id, agent_a_, "wrong-token", 1).error().code, errc::kLeaseLost);
  EXPECT_EQ(queue_.leases().start_apply(id, agent_a_, job.claimed.lease_token, 2).error().code,
            errc::kLeaseLost);
  EXPECT_EQ(start(job, agent_b_).error().code, errc::kLeaseLost);
  clock_.advance(61);
  auto expired = start(job, agent_a_);
  ASSERT_FALSE(expired);
  EXPECT_EQ(expired.error().code, errc::kLeaseLost) << "an expired lease may be re-claimed any time";
  EXPECT_FALSE(runs_.get_run(id)->apply_started_attempt);

  Job second = claim_one(agent_b_);
  ASSERT_EQ(second.claimed.run.id, id);
  EXPECT_EQ(start(job, agent_a_).error().code, errc::kLeaseLost);
  EXPECT_EQ(queue_.leases().start_apply(id, agent_b_, second.claimed.lease_token, 1).error().code,
            errc::kLeaseLost);
  auto started = start(second, agent_b_);
  ASSERT_TRUE(started) << started.error().to_string();
  EXPECT_EQ(runs_.get_run(id)->apply_started_attempt, 2);

  auto fenced = events(id, "run.fenced");
  ASSERT_EQ(fenced.size(), 6u);
  EXPECT_EQ(fenced[0].actor, "agent:" + agent_b_.id);  // newest first
  EXPECT_EQ(fenced[0].detail, (json::object{{"agentId", agent_b_.id}, {"attempt", 1},
                                            {"currentAttempt", 2}, {"call", "phase"}}));
  EXPECT_EQ(queue_.leases().start_apply("run_missing", agent_a_, "t", 1).error().code, errc::kNotFound);
  EXPECT_EQ(events("run_missing", "run.fenced").size(), 0u);
}

TEST_F(StrandedApplyTest, OnlyAppliesAnnounceTheApplyPhase) {
  Run run = plan(capsule("one"));
  Job job = claim_one(agent_a_);
  auto refused = start(job, agent_a_);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kInvalidArgument);
  EXPECT_FALSE(runs_.get_run(run.id)->apply_started_attempt);
  EXPECT_TRUE(events(run.id, "run.apply_started").empty());
  EXPECT_TRUE(events(run.id, "run.fenced").empty());
}

TEST_F(StrandedApplyTest, CancellingAStrandedApplyEndsItAtTheNextClaim) {
  Capsule c = capsule("one");
  Job job = claimed_apply(c);
  ASSERT_TRUE(start(job, agent_a_));
  Run waiting = plan(c);
  clock_.advance(61);
  auto flagged = runs_.cancel(job.claimed.run.id);
  ASSERT_TRUE(flagged);
  EXPECT_EQ(flagged->status, run_status::kRunning);

  Job next = claim_one(agent_b_);  // ends the stranded apply, then the Capsule is free
  EXPECT_EQ(next.claimed.run.id, waiting.id);
  auto cancelled = *runs_.get_run(job.claimed.run.id);
  EXPECT_EQ(cancelled.status, run_status::kCancelled);
  EXPECT_EQ(cancelled.failure_code, errc::kCancelled);
  EXPECT_EQ(cancelled.attempt, 1);
  ASSERT_TRUE(cancelled.failure_message);
  EXPECT_NE(cancelled.failure_message->find("interrupted"), std::string::npos);
  EXPECT_NE(cancelled.failure_message->find(agent_a_.id), std::string::npos);
  EXPECT_NE(cancelled.failure_message->find("takosumi-agent recover"), std::string::npos);
  EXPECT_TRUE(attention(c).empty());
  auto finished = events(job.claimed.run.id, "run.finished");
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].actor, kControlPlaneActor);
}

TEST_F(StrandedApplyTest, TheLateReportOfACancelledStrandedApplyStillKeepsItsState) {
  Capsule c = capsule("one");
  Job job = claimed_apply(c);
  ASSERT_TRUE(start(job, agent_a_));
  clock_.advance(61);
  ASSERT_TRUE(runs_.cancel(job.claimed.run.id));
  EXPECT_TRUE(claim(agent_b_).empty());  // ends the stranded apply as cancelled
  ASSERT_EQ(runs_.get_run(job.claimed.run.id)->status, run_status::kCancelled);

  // The agent comes back with what the apply created: the upload and the report are accepted
  // and the state is kept, partial; the Run stays cancelled.
  EXPECT_TRUE(queue_.leases().check_upload_lease(job.claimed.run.id, agent_a_, job.claimed.lease_token));
  EXPECT_FALSE(queue_.leases().check_upload_lease(job.claimed.run.id, agent_b_, job.claimed.lease_token));
  ASSERT_TRUE(queue_.completion().complete(job.claimed.run.id, agent_a_, interrupted(job, 0)));
  auto current = states_.current(c.id);
  ASSERT_TRUE(current && *current) << "the state the apply changed was forgotten";
  EXPECT_TRUE((*current)->partial);
  auto run = *runs_.get_run(job.claimed.run.id);
  EXPECT_EQ(run.status, run_status::kCancelled);
  EXPECT_EQ(run.state_version_id, (*current)->id);
  ASSERT_EQ(attention(c).size(), 1u);
  EXPECT_EQ(attention(c)[0].code, attention_code::kPartialState);
  // A repeat is acknowledged and stores nothing more.
  ASSERT_TRUE(queue_.completion().complete(job.claimed.run.id, agent_a_, interrupted(job, 0)));
  EXPECT_EQ((*states_.list(c.id, 10, std::nullopt)).size(), 1u);
}

TEST_F(StrandedApplyTest, FencedCompletionIsAuditedAndStoresNothing) {
  Capsule c = capsule("one");
  Job old_job = claimed_apply(c);
  clock_.advance(61);  // expired before the apply started: dispatched again
  Job new_job = claim_one(agent_b_);
  ASSERT_EQ(new_job.claimed.run.id, old_job.claimed.run.id);
  auto refused = queue_.completion().complete(old_job.claimed.run.id, agent_a_, interrupted(old_job, 0));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kLeaseLost);
  EXPECT_EQ(state_version_count(c.id), 0u);
  auto fenced = events(old_job.claimed.run.id, "run.fenced");
  ASSERT_EQ(fenced.size(), 1u);
  EXPECT_EQ(fenced[0].detail, (json::object{{"agentId", agent_a_.id}, {"attempt", 1},
                                            {"currentAttempt", 2}, {"call", "complete"}}));
  EXPECT_EQ(queue_.completion().complete("run_missing", agent_a_, report(old_job)).error().code, errc::kNotFound);
  EXPECT_TRUE(events("run_missing", "run.fenced").empty());
}

TEST_F(StrandedApplyTest, RepeatedCompletionOfAnAttemptStoresOneStateVersionWhateverItSays) {
  Capsule c = capsule("one");
  Job job = claimed_apply(c);
  ASSERT_TRUE(start(job, agent_a_));
  const auto first = interrupted(job, 0);
  ASSERT_TRUE(queue_.completion().complete(job.claimed.run.id, agent_a_, first));
  ASSERT_TRUE(queue_.completion().complete(job.claimed.run.id, agent_a_, first));  // lost answer, retried
  auto different = interrupted(job, 1, std::string(64, 'e'));
  different.status = "succeeded";
  different.failure_code.clear();
  ASSERT_TRUE(queue_.completion().complete(job.claimed.run.id, agent_a_, different));
  auto versions = *states_.list(c.id, 10, std::nullopt);
  ASSERT_EQ(versions.size(), 1u);
  EXPECT_TRUE(versions[0].partial);
  EXPECT_EQ(versions[0].ciphertext_sha256, std::string(64, 'f'));
  auto done = *runs_.get_run(job.claimed.run.id);
  EXPECT_EQ(done.status, run_status::kFailed);
  EXPECT_EQ(done.failure_code, errc::kInterrupted);
  EXPECT_EQ(events(job.claimed.run.id, "state_version.created").size(), 1u);
}

TEST(CapsuleAttentionTest, ListsAPartialCurrentStateAndStrandedAppliesOnly) {
  StateVersion sv;
  sv.id = "sv_3";
  sv.generation = 3;
  sv.created_by_run_id = "run_a";
  controlplane::Run creator;
  creator.id = "run_a";
  creator.status = std::string(run_status::kCancelled);
  creator.failure_code = std::string(errc::kCancelled);
  controlplane::Run stranded;
  stranded.id = "run_s";
  stranded.type = protocol::RunType::apply;
  stranded.status = std::string(run_status::kRunning);
  stranded.attempt = 2;
  stranded.apply_started_attempt = 2;
  stranded.agent_id = "agt_1";
  stranded.lease_expires_at = 100;
  controlplane::Run live = stranded;
  live.id = "run_live";
  live.lease_expires_at = 101;
  // Announced only in an earlier attempt: stranding belongs to the current attempt.
  controlplane::Run earlier_attempt = stranded;
  earlier_attempt.id = "run_old";
  earlier_attempt.apply_started_attempt = 1;

  EXPECT_TRUE(capsule_attention(sv, creator, {live, earlier_attempt}, 100).empty());
  auto all = capsule_attention(std::nullopt, std::nullopt, {stranded, live}, 100);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].code, attention_code::kApplyStranded);
  EXPECT_EQ(all[0].message, "the apply of run run_s was interrupted and agent agt_1 has not reported"
                            " back; its state may be on that host: run `takosumi-agent recover`"
                            " there, or cancel the run");
  sv.partial = true;
  all = capsule_attention(sv, creator, {stranded}, 100);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].code, attention_code::kPartialState);
  EXPECT_EQ(all[0].message, "the current StateVersion was kept from an apply that did not finish"
                            " (cancelled); review it and plan again");
  EXPECT_EQ(all[1].run_id, "run_s");
}

}  // namespace
}  // namespace takosumi::controlplane
