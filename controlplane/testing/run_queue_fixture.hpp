#pragma once
// Test-only: RunQueue and its stores over a real SQLite file with a FakeClock, two registered
// agents, and helpers that play plans and applies. Shared by the queue and crash-safety tests.
#include <gtest/gtest.h>

#include <iostream>

#include "common/error_codes.hpp"
#include "controlplane/runs/apply_admission.hpp"
#include "controlplane/store/agent_registry.hpp"
#include "controlplane/store/catalog_store.hpp"
#include "controlplane/runs/run_queue.hpp"
#include "controlplane/store/run_log_store.hpp"
#include "controlplane/store/stores.hpp"
#include "controlplane/testing/test_support.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/fake_clock.hpp"

namespace takosumi::controlplane {

using takosumi::testing::TempDir;
inline const std::string kDigest(64, 'd');

class RunQueueTest : public ::testing::Test {
 protected:
  using Run = controlplane::Run;  // hides ::testing::Test::Run()

  RunQueueTest() {
    workspace_id_ = catalog_.create_workspace("ws")->id;
    agent_a_ = add_agent("agent-a");
    agent_b_ = add_agent("agent-b");
  }

  Agent add_agent(const std::string& name) {
    auto cred = agents_.register_agent({name, "0.1.0", {}, 2, "box-" + name, "sign-" + name});
    EXPECT_TRUE(cred);
    return *agents_.authenticate(cred->agent_token);
  }

  Capsule capsule(const std::string& name) {
    CapsuleRequest req{name, {"file:///repo", "main", ""}, {{"url", {"app_url", "string", true}}}, {}};
    auto c = catalog_.create_capsule(workspace_id_, req);
    EXPECT_TRUE(c) << c.error().to_string();
    return *c;
  }

  Run plan(const Capsule& c) {
    auto r = runs_.create_plan(c, std::string(40, 'a'));
    EXPECT_TRUE(r) << r.error().to_string();
    return *r;
  }

  std::vector<Job> claim(const Agent& agent, int slots = 1) {
    auto jobs = queue_.claims().claim(agent, slots, build_);
    EXPECT_TRUE(jobs) << jobs.error().to_string();
    return jobs ? std::move(*jobs) : std::vector<Job>{};
  }

  Job claim_one(const Agent& agent) {
    auto jobs = claim(agent);
    EXPECT_EQ(jobs.size(), 1u);
    return jobs.empty() ? Job{} : std::move(jobs.front());
  }

  static protocol::RunReport report(const Job& job, std::string status = "succeeded") {
    protocol::RunReport r;
    r.lease_token = job.claimed.lease_token;
    r.attempt = job.claimed.run.attempt;
    r.status = std::move(status);
    return r;
  }

  // A plan Run that succeeded with changes and an uploaded plan artifact.
  Run succeeded_plan(const Capsule& c) {
    plan(c);
    return complete_next_plan();
  }

  // Claims the next Run (a plan or destroy_plan) and completes it with changes and its artifact.
  Run complete_next_plan(std::vector<protocol::DataLossMark> data_loss = {}) {
    return complete_plan_job(claim_one(agent_a_), std::move(data_loss));
  }
  Run complete_plan_job(const Job& job, std::vector<protocol::DataLossMark> data_loss = {}) {
    EXPECT_TRUE(runs_.record_artifact(job.claimed.run.id, "plan", kDigest, 10));
    auto r = report(job);
    r.has_changes = true;
    r.plan_digest = std::string(64, 'e');
    r.plan_artifact_sha256 = kDigest;
    r.data_loss = std::move(data_loss);
    EXPECT_TRUE(queue_.completion().complete(job.claimed.run.id, agent_a_, r));
    return *runs_.get_run(job.claimed.run.id);
  }

  // Plans the queued plan Run and applies it; returns the new StateVersion.
  StateVersion apply_next_plan(const Capsule& c) {
    auto apply = create_apply(complete_next_plan());
    EXPECT_TRUE(apply) << apply.error().to_string();
    auto current = states_.current(c.id);
    EXPECT_TRUE(finish_apply(claim_one(agent_a_), *current ? (*current)->generation : 0));
    return **states_.current(c.id);
  }

  Result<Run> create_apply(const Run& plan_run) {
    auto current = states_.current(plan_run.capsule_id);
    auto exists = runs_.apply_exists_for(plan_run.id);
    TAKOSUMI_TRY(check_can_apply(plan_run, *current ? (*current)->generation : 0, true, *exists));
    return runs_.create_apply(plan_run);
  }

  // Claims the apply Run and completes it with a new state starting at prior_generation.
  Status finish_apply(const Job& job, std::int64_t prior_generation, json::object outputs = {}) {
    const std::string sha(64, static_cast<char>('0' + prior_generation % 10));
    EXPECT_TRUE(runs_.record_artifact(job.claimed.run.id, "state", sha, 10));
    auto r = report(job);
    r.new_state = protocol::NewStateDescriptor{sha, std::string(64, 'p'), 3, "lineage-1", prior_generation};
    r.outputs = std::move(outputs);
    auto done = queue_.completion().complete(job.claimed.run.id, agent_a_, r);
    if (!done) std::cerr << "complete: " << done.error().to_string() << "\n";
    return done;
  }

  Stores stores() {
    return {db_,     catalog_, runs_,            states_,   logs_,   connections_, dependencies_,
            shares_, tokens_,  workspace_plans_, backups_, agents_, pool_tokens_, pools_, audit_,
            blobs_,  keys_};
  }

  std::size_t state_version_count(const std::string& capsule_id) {
    return states_.list(capsule_id, 100, std::nullopt)->size();
  }

  TempDir dir_;
  testing::FakeClock clock_{1'700'000'000};
  std::optional<PostgresSettings> postgres_ = testing::new_test_store();  // the pg.* run's
  Database db_ = testing::open_test_db(dir_.path() / "control.db", postgres_);
  CatalogStore catalog_{db_, clock_};
  RunStore runs_{db_, clock_};
  StateStore states_{db_, clock_};
  RunLogStore logs_{db_};
  AgentRegistry agents_{db_, clock_};
  PoolTokenStore pool_tokens_{db_, clock_};
  AgentPoolStore pools_{db_, clock_};
  Keyring keys_{crypto::BoxKeyPair::generate(), crypto::SignKeyPair::generate()};
  ConnectionStore connections_{db_, keys_, clock_};
  DependencyStore dependencies_{db_, clock_};
  OutputShareStore shares_{db_, clock_};
  ApiTokenStore tokens_{db_, clock_};
  WorkspacePlanStore workspace_plans_{db_, clock_};
  BackupStore backups_{db_, clock_};
  AuditLog audit_{db_, clock_};
  BlobStore blobs_ = *BlobStore::open(dir_.path(), postgres_);
  RunQueue queue_{db_, catalog_, runs_, states_, connections_, audit_, clock_, 60};
  ManifestFactory build_ = [](const ClaimedRun& c) -> Result<protocol::SignedManifest> {
    return protocol::SignedManifest{"manifest-of-" + c.run.id, "signature"};
  };
  std::string workspace_id_;
  Agent agent_a_;
  Agent agent_b_;
};

}  // namespace takosumi::controlplane
