// Queue, lease and completion rules over a real SQLite file, with a FakeClock.
#include "controlplane/runs/run_queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "controlplane/testing/run_queue_fixture.hpp"
#include "common/failure_codes.hpp"
#include "tests/support/fake_clock.hpp"

using takosumi::testing::FakeClock;

namespace takosumi::controlplane {
namespace {

TEST_F(RunQueueTest, ClaimsTheOldestQueuedRunFirst) {
  Run first = plan(capsule("one"));
  clock_.advance(1);
  Run second = plan(capsule("two"));
  Job job = claim_one(agent_a_);
  EXPECT_EQ(job.claimed.run.id, first.id);
  EXPECT_EQ(job.claimed.run.status, run_status::kRunning);
  EXPECT_EQ(job.claimed.run.attempt, 1);
  EXPECT_EQ(job.claimed.lease_expires_at, clock_.now_unix() + 60);
  EXPECT_EQ(job.manifest.payload, "manifest-of-" + first.id);
  EXPECT_EQ(claim_one(agent_a_).claimed.run.id, second.id);
  EXPECT_TRUE(claim(agent_a_).empty());
}

TEST_F(RunQueueTest, OnlyOneRunPerCapsuleHoldsALease) {
  Capsule c = capsule("one");
  Run first = plan(c);
  Run second = plan(c);
  auto jobs = claim(agent_a_, 2);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].claimed.run.id, first.id);
  ASSERT_TRUE(queue_.completion().complete(first.id, agent_a_, report(jobs[0])));
  EXPECT_EQ(claim_one(agent_b_).claimed.run.id, second.id);
}

TEST_F(RunQueueTest, ExpiredLeaseIsReclaimedWithANewAttemptAndToken) {
  Run run = plan(capsule("one"));
  Job old_job = claim_one(agent_a_);
  clock_.advance(61);
  Job new_job = claim_one(agent_b_);
  EXPECT_EQ(new_job.claimed.run.id, run.id);
  EXPECT_EQ(new_job.claimed.run.attempt, 2);
  EXPECT_NE(new_job.claimed.lease_token, old_job.claimed.lease_token);

  auto stale_beat = queue_.leases().heartbeat(run.id, agent_a_, old_job.claimed.lease_token);
  ASSERT_FALSE(stale_beat);
  EXPECT_EQ(stale_beat.error().code, errc::kLeaseLost);
  auto stale_complete = queue_.completion().complete(run.id, agent_a_, report(old_job));
  ASSERT_FALSE(stale_complete);
  EXPECT_EQ(stale_complete.error().code, errc::kLeaseLost);
  // The new holder's token with the old agent identity is refused too.
  EXPECT_FALSE(queue_.leases().heartbeat(run.id, agent_a_, new_job.claimed.lease_token));
  EXPECT_TRUE(queue_.leases().heartbeat(run.id, agent_b_, new_job.claimed.lease_token));
}

TEST_F(RunQueueTest, HeartbeatExtendsTheLease) {
  plan(capsule("one"));
  Job job = claim_one(agent_a_);
  clock_.advance(50);
  auto beat = queue_.leases().heartbeat(job.claimed.run.id, agent_a_, job.claimed.lease_token);
  ASSERT_TRUE(beat) << beat.error().to_string();
  EXPECT_EQ(beat->lease_expires_at, clock_.now_unix() + 60);
  EXPECT_FALSE(beat->cancel_requested);
  clock_.advance(50);
  EXPECT_TRUE(claim(agent_b_).empty());
}

TEST_F(RunQueueTest, ExpiredButUnclaimedLeaseMayStillComplete) {
  Run run = plan(capsule("one"));
  Job job = claim_one(agent_a_);
  clock_.advance(600);
  ASSERT_TRUE(queue_.completion().complete(run.id, agent_a_, report(job)));
  EXPECT_EQ(runs_.get_run(run.id)->status, run_status::kSucceeded);
}

TEST_F(RunQueueTest, PlanWithChangesNeedsItsUploadedArtifact) {
  Run run = plan(capsule("one"));
  Job job = claim_one(agent_a_);
  auto r = report(job);
  r.has_changes = true;
  r.plan_digest = std::string(64, 'e');
  r.plan_artifact_sha256 = kDigest;
  auto refused = queue_.completion().complete(run.id, agent_a_, r);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kInvalidArgument);
  EXPECT_EQ(runs_.get_run(run.id)->status, run_status::kRunning);
  ASSERT_TRUE(runs_.record_artifact(run.id, "plan", kDigest, 10));
  ASSERT_TRUE(queue_.completion().complete(run.id, agent_a_, r));
  auto stored = *runs_.get_run(run.id);
  EXPECT_EQ(stored.status, run_status::kSucceeded);
  EXPECT_TRUE(stored.has_changes);
  EXPECT_EQ(stored.plan_artifact_sha256, kDigest);
  EXPECT_EQ(stored.prior_generation, 0);
}

TEST_F(RunQueueTest, ApplyAppendsAStateVersionOnceEvenWhenCompletedTwice) {
  Capsule c = capsule("one");
  Run plan_run = succeeded_plan(c);
  auto apply = create_apply(plan_run);
  ASSERT_TRUE(apply) << apply.error().to_string();
  EXPECT_EQ(apply->planned_by, plan_run.id);
  EXPECT_EQ(apply->source_commit, plan_run.source_commit);
  Job job = claim_one(agent_a_);
  ASSERT_EQ(job.claimed.run.id, apply->id);
  ASSERT_TRUE(finish_apply(job, 0));
  ASSERT_TRUE(finish_apply(job, 0));  // a retried complete after a lost answer
  auto versions = *states_.list(c.id, 100, std::nullopt);
  ASSERT_EQ(versions.size(), 1u);
  EXPECT_EQ(versions[0].generation, 1);
  EXPECT_EQ(versions[0].created_by_run_id, apply->id);
  auto done = *runs_.get_run(apply->id);
  EXPECT_EQ(done.status, run_status::kSucceeded);
  EXPECT_EQ(done.state_version_id, versions[0].id);
}

TEST_F(RunQueueTest, StalePriorGenerationIsRefusedAndStoresNothing) {
  Capsule c = capsule("one");
  auto apply = create_apply(succeeded_plan(c));
  ASSERT_TRUE(apply);
  Job job = claim_one(agent_a_);
  auto refused = finish_apply(job, 4);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kConflict);
  EXPECT_EQ(state_version_count(c.id), 0u);
  EXPECT_EQ(runs_.get_run(apply->id)->status, run_status::kRunning);
  EXPECT_TRUE(finish_apply(job, 0));
  EXPECT_EQ(state_version_count(c.id), 1u);
}

TEST_F(RunQueueTest, GenerationsIncrementAndListNewestFirst) {
  Capsule c = capsule("one");
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(create_apply(succeeded_plan(c)));
    ASSERT_TRUE(finish_apply(claim_one(agent_a_), i));
  }
  auto versions = *states_.list(c.id, 2, std::nullopt);
  ASSERT_EQ(versions.size(), 2u);
  EXPECT_EQ(versions[0].generation, 3);
  EXPECT_EQ(versions[1].generation, 2);
  auto older = *states_.list(c.id, 2, versions[1].generation);
  ASSERT_EQ(older.size(), 1u);
  EXPECT_EQ(older[0].generation, 1);
}

TEST_F(RunQueueTest, ApplyIsRefusedUnlessThePlanCanBeApplied) {
  Capsule c = capsule("one");
  Run plan_run = succeeded_plan(c);
  Run not_succeeded = plan_run;
  not_succeeded.status = run_status::kFailed;
  EXPECT_EQ(check_can_apply(not_succeeded, 0, true, false).error().code, errc::kConflict);
  Run no_changes = plan_run;
  no_changes.has_changes = false;
  EXPECT_FALSE(check_can_apply(no_changes, 0, true, false));
  EXPECT_FALSE(check_can_apply(plan_run, 0, false, false));  // artifact missing
  EXPECT_FALSE(check_can_apply(plan_run, 1, true, false));   // state moved on since the plan
  ASSERT_TRUE(create_apply(plan_run));
  auto second = create_apply(plan_run);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code, errc::kConflict);
  EXPECT_NE(second.error().message.find("already"), std::string::npos);
  auto direct = runs_.create_apply(plan_run);  // the schema refuses it as well
  ASSERT_FALSE(direct);
  EXPECT_EQ(direct.error().code, errc::kConflict);
}

TEST_F(RunQueueTest, CancelStopsQueuedRunsAndFlagsRunningOnes) {
  Run queued = plan(capsule("one"));
  auto cancelled = runs_.cancel(queued.id);
  ASSERT_TRUE(cancelled);
  EXPECT_EQ(cancelled->status, run_status::kCancelled);
  EXPECT_TRUE(claim(agent_a_).empty());
  EXPECT_EQ(runs_.cancel(queued.id).error().code, errc::kConflict);

  Run running = plan(capsule("two"));
  Job job = claim_one(agent_a_);
  auto flagged = runs_.cancel(running.id);
  ASSERT_TRUE(flagged);
  EXPECT_EQ(flagged->status, run_status::kRunning);
  EXPECT_TRUE(queue_.leases().heartbeat(running.id, agent_a_, job.claimed.lease_token)->cancel_requested);
  auto r = report(job, "failed");
  r.failure_code = errc::kCancelled;
  ASSERT_TRUE(queue_.completion().complete(running.id, agent_a_, r));
  EXPECT_EQ(runs_.get_run(running.id)->status, run_status::kCancelled);
}

TEST_F(RunQueueTest, FailedReportStoresTheFailure) {
  Run run = plan(capsule("one"));
  Job job = claim_one(agent_a_);
  auto r = report(job, "failed");
  r.failure_code = errc::kOpentofuPlanFailed;
  r.failure_message = "Error: Unsupported argument";
  ASSERT_TRUE(queue_.completion().complete(run.id, agent_a_, r));
  auto stored = *runs_.get_run(run.id);
  EXPECT_EQ(stored.status, run_status::kFailed);
  EXPECT_EQ(stored.failure_code, errc::kOpentofuPlanFailed);
  EXPECT_EQ(stored.failure_message, "Error: Unsupported argument");
  EXPECT_TRUE(stored.finished_at);
}

TEST_F(RunQueueTest, RefusedManifestReportWithAttemptZeroEndsTheCurrentAttempt) {
  Run run = plan(capsule("one"));
  Job job = claim_one(agent_a_);
  auto r = report(job, "failed");
  r.attempt = 0;  // the agent could not trust the manifest, so it does not know the attempt
  r.failure_code = errc::kManifestBadSignature;
  ASSERT_TRUE(queue_.completion().complete(run.id, agent_a_, r));
  ASSERT_TRUE(queue_.completion().complete(run.id, agent_a_, r));  // retried after a lost answer
  auto stored = *runs_.get_run(run.id);
  EXPECT_EQ(stored.status, run_status::kFailed);
  EXPECT_EQ(stored.failure_code, errc::kManifestBadSignature);
  EXPECT_EQ(stored.completed_attempt, 1);
}

TEST_F(RunQueueTest, OutputsAreFilteredThroughTheAllowlist) {
  Capsule c = capsule("one");
  ASSERT_TRUE(create_apply(succeeded_plan(c)));
  json::object outputs{{"url", "https://app"}, {"password", "hunter2"}};
  ASSERT_TRUE(finish_apply(claim_one(agent_a_), 0, outputs));
  auto stored = *states_.outputs(c.id);
  EXPECT_EQ(stored.generation, 1);
  EXPECT_EQ(stored.outputs.size(), 1u);
  EXPECT_EQ(stored.outputs.at("url"), "https://app");
}

TEST_F(RunQueueTest, UnbuildableManifestFailsTheRunAndClaimGoesOn) {
  Run broken = plan(capsule("one"));
  Run fine = plan(capsule("two"));
  build_ = [&](const ClaimedRun& c) -> Result<protocol::SignedManifest> {
    if (c.run.id == broken.id) return fail(errc::kStateIntegrityFailed, "prior state blob is missing");
    return protocol::SignedManifest{"m", "s"};
  };
  Job job = claim_one(agent_a_);
  EXPECT_EQ(job.claimed.run.id, fine.id);
  auto failed = *runs_.get_run(broken.id);
  EXPECT_EQ(failed.status, run_status::kFailed);
  EXPECT_EQ(failed.failure_code, errc::kStateIntegrityFailed);
  EXPECT_EQ(failed.attempt, 0);  // the claim was rolled back
}

TEST_F(RunQueueTest, RunOfACapsuleWithARevokedConnectionFailsAtClaimAndClaimGoesOn) {
  ConnectionRequest req{workspace_id_, "aws", "registry.opentofu.org/hashicorp/aws",
                        protocol::AuthMode::env, {}, {}};
  req.values.emplace("AWS_ACCESS_KEY_ID", SecretBytes::from_string("AKIA-value"));
  auto conn = connections_.create(std::move(req));
  ASSERT_TRUE(conn) << conn.error().to_string();
  Capsule uses = capsule("uses");
  ASSERT_TRUE(catalog_.set_connections(uses.id, {conn->id}));
  Run refused = plan(*catalog_.get_capsule(uses.id));
  Run fine = plan(capsule("other"));
  ASSERT_TRUE(connections_.revoke(conn->id));

  Job job = claim_one(agent_a_);
  EXPECT_EQ(job.claimed.run.id, fine.id);
  auto failed = *runs_.get_run(refused.id);
  EXPECT_EQ(failed.status, run_status::kFailed);
  EXPECT_EQ(failed.failure_code, errc::kConnectionRevoked);
  EXPECT_NE(failed.failure_message->find(conn->id), std::string::npos) << *failed.failure_message;
  EXPECT_NE(failed.failure_message->find("\"aws\""), std::string::npos);
  EXPECT_EQ(failed.attempt, 0);

  auto events = *audit_.list(workspace_id_, 50, std::nullopt);
  auto refusal = std::ranges::find(events, std::string("run.refused"), &AuditEvent::action);
  ASSERT_NE(refusal, events.end());
  EXPECT_EQ(refusal->actor, kControlPlaneActor);
  EXPECT_EQ(refusal->run_id, refused.id);
  EXPECT_EQ(refusal->connection_id, conn->id);
  EXPECT_EQ(refusal->detail.at("code"), errc::kConnectionRevoked.data());
  auto claimed = std::ranges::find(events, std::string("run.claimed"), &AuditEvent::action);
  ASSERT_NE(claimed, events.end());
  EXPECT_EQ(claimed->actor, "agent:" + agent_a_.id);
  EXPECT_EQ(claimed->run_id, fine.id);
}

TEST_F(RunQueueTest, RunOfACapsuleWithAnExpiredConnectionFailsAtClaim) {
  ConnectionRequest req{workspace_id_, "gh", "registry.opentofu.org/integrations/github",
                        protocol::AuthMode::env, {}, clock_.now_unix() + 30};
  req.values.emplace("GITHUB_TOKEN", SecretBytes::from_string("ghp-value"));
  auto conn = connections_.create(std::move(req));
  ASSERT_TRUE(conn) << conn.error().to_string();
  Capsule uses = capsule("uses");
  ASSERT_TRUE(catalog_.set_connections(uses.id, {conn->id}));
  Run run = plan(*catalog_.get_capsule(uses.id));
  clock_.advance(30);
  EXPECT_TRUE(claim(agent_a_).empty());
  auto failed = *runs_.get_run(run.id);
  EXPECT_EQ(failed.failure_code, errc::kConnectionExpired);
  EXPECT_NE(failed.failure_message->find("assign an active Connection"), std::string::npos);
}

TEST_F(RunQueueTest, TransitionsAreAuditedWithTheirActors) {
  Run run = plan(capsule("one"));
  claim_one(agent_a_);
  clock_.advance(61);
  Job second = claim_one(agent_b_);
  auto r = report(second, "failed");
  r.failure_code = errc::kOpentofuPlanFailed;
  r.failure_message = "Error: secret-looking text";
  ASSERT_TRUE(queue_.completion().complete(run.id, agent_b_, r));
  auto events = *audit_.list(workspace_id_, 50, std::nullopt);
  std::vector<std::string> actions;
  for (const auto& e : events) actions.push_back(e.action + " " + e.actor);
  EXPECT_EQ(actions, (std::vector<std::string>{"run.finished agent:" + agent_b_.id,
                                               "run.claimed agent:" + agent_b_.id,
                                               "run.lease_expired control-plane",
                                               "run.claimed agent:" + agent_a_.id}));
  EXPECT_EQ(events[0].detail, (json::object{{"status", "failed"}, {"failureCode", "opentofu_plan_failed"}}));
  EXPECT_EQ(events[1].detail.at("attempt"), 2);
}

TEST_F(RunQueueTest, RefusedOutputsAreStoredWithTheRun) {
  Run run = plan(capsule("one"));
  Job job = claim_one(agent_a_);
  auto r = report(job);
  r.refused_outputs.push_back({"url", "a URL with a password in its userinfo"});
  ASSERT_TRUE(queue_.completion().complete(run.id, agent_a_, r));
  EXPECT_EQ(runs_.get_run(run.id)->refused_outputs_json,
            R"([{"name":"url","reason":"a URL with a password in its userinfo"}])");
}

TEST_F(RunQueueTest, RunFailsAfterTooManyExpiredLeases) {
  Run run = plan(capsule("one"));
  for (int i = 0; i < kMaxAttempts; ++i) {
    claim_one(agent_a_);
    clock_.advance(61);
  }
  EXPECT_TRUE(claim(agent_a_).empty());
  auto failed = *runs_.get_run(run.id);
  EXPECT_EQ(failed.status, run_status::kFailed);
  EXPECT_EQ(failed.failure_code, errc::kLeaseLost);
}

TEST_F(RunQueueTest, LogSequenceRules) {
  Run run = plan(capsule("one"));
  claim_one(agent_a_);
  EXPECT_EQ(*logs_.append(run.id, 1, 0, "a"), 1);
  EXPECT_EQ(*logs_.append(run.id, 1, 1, "b"), 2);
  EXPECT_EQ(*logs_.append(run.id, 1, 1, "b"), 2);  // repeated: acknowledged, stored once
  auto gap = logs_.append(run.id, 1, 5, "x");
  ASSERT_FALSE(gap);
  EXPECT_EQ(gap.error().code, errc::kConflict);
  EXPECT_NE(gap.error().message.find("nextSeq is 2"), std::string::npos);
  EXPECT_EQ(*logs_.append(run.id, 2, 0, "c"), 1);  // a new attempt starts at 0
  // What a module printed is kept, a NUL byte in it as U+FFFD: never a chunk the store refuses.
  EXPECT_EQ(*logs_.append(run.id, 2, 1, std::string("nul\0here", 8)), 2);
  auto chunks = *logs_.list(run.id);
  ASSERT_EQ(chunks.size(), 4u);
  EXPECT_EQ(chunks[1].text, "b");
  EXPECT_EQ(chunks[2].attempt, 2);
  EXPECT_EQ(chunks[3].text, "nul\xEF\xBF\xBDhere");
  EXPECT_EQ(logs_.append(run.id, 2, 2, std::string(kMaxLogChunkBytes + 1, 'x')).error().code,
            errc::kPayloadTooLarge);
}

TEST_F(RunQueueTest, LogsPastTheCapAreDroppedButStillAcknowledged) {
  Run run = plan(capsule("one"));
  claim_one(agent_a_);
  const std::string chunk(kMaxLogChunkBytes, 'x');
  const std::int64_t full = kMaxRunLogBytes / static_cast<std::int64_t>(chunk.size());
  for (std::int64_t seq = 0; seq < full; ++seq) ASSERT_EQ(*logs_.append(run.id, 1, seq, chunk), seq + 1);
  EXPECT_EQ(*logs_.append(run.id, 1, full, chunk), full + 1);
  EXPECT_EQ(*logs_.append(run.id, 1, full + 1, chunk), full + 2);
  auto chunks = *logs_.list(run.id);
  ASSERT_EQ(chunks.size(), static_cast<std::size_t>(full + 1));
  EXPECT_NE(chunks.back().text.find("log limit reached"), std::string::npos);
}

TEST_F(RunQueueTest, RollbackPlanRunsAtTheTargetsCommitAndItsApplyRecordsRestoredFrom) {
  Capsule c = capsule("one");
  ASSERT_TRUE(runs_.create_plan(c, std::string(40, '1')));
  StateVersion first = apply_next_plan(c);
  ASSERT_TRUE(runs_.create_plan(c, std::string(40, '2')));
  StateVersion second = apply_next_plan(c);
  EXPECT_EQ(first.source_commit, std::string(40, '1'));

  auto rollback = runs_.create_rollback_plan(c, first, false);
  ASSERT_TRUE(rollback) << rollback.error().to_string();
  EXPECT_EQ(rollback->type, protocol::RunType::plan);
  EXPECT_EQ(rollback->source_commit, first.source_commit);
  EXPECT_EQ(rollback->restores_state_version_id, first.id);
  EXPECT_EQ(state_version_count(c.id), 2u);
  Job job = claim_one(agent_a_);
  ASSERT_TRUE(job.claimed.prior_state);
  EXPECT_EQ(job.claimed.prior_state->id, second.id) << "a rollback plans against the current state";
  ASSERT_TRUE(create_apply(complete_plan_job(job)));
  ASSERT_TRUE(finish_apply(claim_one(agent_a_), 2));
  StateVersion third = **states_.current(c.id);
  EXPECT_EQ(third.generation, 3);
  EXPECT_EQ(third.restored_from, first.id);
  EXPECT_EQ(third.source_commit, first.source_commit);
  EXPECT_EQ(*states_.get(first.id), first);
}

TEST_F(RunQueueTest, DriftCheckNeverAppendsNeverChangesOutputsAndCannotBeApplied) {
  Capsule c = capsule("one");
  ASSERT_TRUE(create_apply(succeeded_plan(c)));
  ASSERT_TRUE(finish_apply(claim_one(agent_a_), 0, {{"url", "https://app"}}));
  StateVersion pinned = **states_.current(c.id);
  auto created = runs_.create_drift_checks({{c, pinned}});
  ASSERT_TRUE(created);
  Job job = claim_one(agent_a_);
  ASSERT_EQ(job.claimed.run.id, (*created)[0].id);
  ASSERT_TRUE(job.claimed.prior_state);
  EXPECT_EQ(job.claimed.prior_state->id, pinned.id);

  ASSERT_TRUE(runs_.record_artifact(job.claimed.run.id, "state", kDigest, 10));  // as if it had
  auto r = report(job);
  r.new_state = protocol::NewStateDescriptor{kDigest, std::string(64, 'p'), 9, "lineage-1", 1};
  r.outputs = json::object{{"url", "https://changed"}};
  auto refused = queue_.completion().complete(job.claimed.run.id, agent_a_, r);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kInvalidArgument);
  r.new_state.reset();
  r.has_changes = true;
  r.drift = protocol::DriftReport{"drift", {{"local_file.a", "local_file", "update", {"content"}}}};
  ASSERT_TRUE(queue_.completion().complete(job.claimed.run.id, agent_a_, r));

  auto done = *runs_.get_run(job.claimed.run.id);
  EXPECT_EQ(done.status, run_status::kSucceeded);
  ASSERT_TRUE(done.drift_json);
  EXPECT_NE(done.drift_json->find("local_file.a"), std::string::npos);
  EXPECT_FALSE(done.state_version_id);
  EXPECT_EQ(state_version_count(c.id), 1u);
  EXPECT_EQ(states_.outputs(c.id)->outputs.at("url"), "https://app");
  auto apply = check_can_apply(done, 1, true, false);
  ASSERT_FALSE(apply);
  EXPECT_NE(apply.error().message.find("read-only"), std::string::npos);
}

TEST_F(RunQueueTest, DestroyApplyAppendsTheNextGenerationAndMarksTheCapsule) {
  Capsule c = capsule("one");
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(create_apply(succeeded_plan(c)));
    ASSERT_TRUE(finish_apply(claim_one(agent_a_), i));
  }
  ASSERT_TRUE(runs_.create_destroy_plan(c, std::string(40, 'a')));
  Run destroy = complete_next_plan({{"local_file.a", "local_file", "delete", "files hold data"}});
  EXPECT_EQ(destroy.type, protocol::RunType::destroy_plan);
  EXPECT_TRUE(claim(agent_a_).empty()) << "nothing runs until the destroy is applied";
  auto apply = create_apply(destroy);
  ASSERT_TRUE(apply) << apply.error().to_string();
  ASSERT_TRUE(finish_apply(claim_one(agent_a_), 2));
  EXPECT_EQ((*states_.current(c.id))->generation, 3);
  EXPECT_EQ((*states_.current(c.id))->created_by_run_id, apply->id);
  EXPECT_TRUE(catalog_.get_capsule(c.id)->destroyed_at);
  EXPECT_TRUE(*runs_.is_destroy_result(**states_.current(c.id)));

  ASSERT_TRUE(create_apply(succeeded_plan(c)));  // used again: starts from the empty version
  ASSERT_TRUE(finish_apply(claim_one(agent_a_), 3));
  EXPECT_FALSE(catalog_.get_capsule(c.id)->destroyed_at);
}

TEST_F(RunQueueTest, DriftCheckPinnedToAnOldVersionFailsWhenClaimed) {
  Capsule c = capsule("one");
  ASSERT_TRUE(create_apply(succeeded_plan(c)));
  ASSERT_TRUE(finish_apply(claim_one(agent_a_), 0));
  StateVersion old = **states_.current(c.id);
  ASSERT_TRUE(create_apply(succeeded_plan(c)));
  ASSERT_TRUE(finish_apply(claim_one(agent_a_), 1));
  auto created = runs_.create_drift_checks({{c, old}});
  ASSERT_TRUE(created);
  EXPECT_TRUE(claim(agent_a_).empty());
  auto failed = *runs_.get_run((*created)[0].id);
  EXPECT_EQ(failed.status, run_status::kFailed);
  EXPECT_EQ(failed.failure_code, "state_version_superseded");
}

TEST_F(RunQueueTest, OnlyPlansAndDestroyPlansCanBeApplied) {
  Run applied = succeeded_plan(capsule("one"));
  applied.type = protocol::RunType::apply;
  EXPECT_EQ(check_can_apply(applied, 0, true, false).error().code, errc::kConflict);
  applied.type = protocol::RunType::destroy_plan;
  EXPECT_TRUE(check_can_apply(applied, 0, true, false));
}

}  // namespace
}  // namespace takosumi::controlplane

namespace takosumi::controlplane {
namespace {

// A claim whose answer never reached its agent goes back to the queue as it was: the next agent
// gets it at once, as the same attempt, and the lost lease is worth nothing.
TEST_F(RunQueueTest, ReleasedClaimIsQueuedAgainWithItsAttempt) {
  Run run = plan(capsule("one"));
  Job lost = claim_one(agent_a_);
  ASSERT_EQ(lost.claimed.run.attempt, 1);
  ASSERT_TRUE(queue_.leases().release(run.id, agent_a_, lost.claimed.lease_token));
  Run queued = *runs_.get_run(run.id);
  EXPECT_EQ(queued.status, "queued");
  EXPECT_EQ(queued.attempt, 0);
  EXPECT_FALSE(queued.agent_id);
  EXPECT_FALSE(queued.started_at);

  Job next = claim_one(agent_b_);  // no lease to sit out
  EXPECT_EQ(next.claimed.run.id, run.id);
  EXPECT_EQ(next.claimed.run.attempt, 1);
  EXPECT_FALSE(queue_.leases().heartbeat(run.id, agent_a_, lost.claimed.lease_token));
  auto again = queue_.leases().release(run.id, agent_a_, lost.claimed.lease_token);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, errc::kLeaseLost);
  EXPECT_TRUE(queue_.leases().heartbeat(run.id, agent_b_, next.claimed.lease_token));

  auto events = *audit_.list(workspace_id_, 50, std::nullopt);
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events[1].action, "run.released");
  EXPECT_EQ(events[1].detail, (json::object{{"agentId", agent_a_.id}, {"attempt", 1}}));
}

TEST_F(RunQueueTest, AReclaimedRunIsReleasedToItsEarlierAttempt) {
  Run run = plan(capsule("one"));
  claim_one(agent_a_);
  clock_.advance(61);
  Job second = claim_one(agent_b_);
  ASSERT_EQ(second.claimed.run.attempt, 2);
  ASSERT_TRUE(queue_.leases().release(run.id, agent_b_, second.claimed.lease_token));
  EXPECT_EQ(runs_.get_run(run.id)->attempt, 1);
  EXPECT_TRUE(runs_.get_run(run.id)->started_at);
  EXPECT_EQ(claim_one(agent_a_).claimed.run.attempt, 2);
}

// Once the agent has announced `tofu apply`, the claim was plainly delivered: never released.
TEST_F(RunQueueTest, AnAnnouncedApplyIsNeverReleased) {
  Capsule c = capsule("one");
  plan(c);
  ASSERT_TRUE(create_apply(complete_next_plan()));
  Job apply = claim_one(agent_a_);
  ASSERT_TRUE(queue_.leases().start_apply(apply.claimed.run.id, agent_a_, apply.claimed.lease_token, 1));
  auto released = queue_.leases().release(apply.claimed.run.id, agent_a_, apply.claimed.lease_token);
  ASSERT_FALSE(released);
  EXPECT_EQ(released.error().code, errc::kLeaseLost);
  EXPECT_EQ(runs_.get_run(apply.claimed.run.id)->status, "running");
}

}  // namespace
}  // namespace takosumi::controlplane
