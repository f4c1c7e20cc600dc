// Crash safety over the real HTTP API with the test playing the agent: the apply phase call, a
// stranded apply that nobody else gets, the partial StateVersion its restarted agent reports, the
// Capsule's attention fields, fenced calls in the activity feed, idempotent uploads.
#include "controlplane/testing/http_api_fixture.hpp"

namespace takosumi::controlplane {
namespace {

class CrashSafetyApiTest : public HttpApiTest {
 protected:
  void SetUp() override {
    HttpApiTest::SetUp();
    register_agent();
    workspace_ = create_workspace();
    capsule_ = create_capsule(workspace_, "app");
  }

  // Plans the Capsule and creates the plan's apply; returns the claimed apply job.
  AgentJob claimed_apply() {
    auto plan = api(http::verb::post, "/api/v1/capsules/" + capsule_ + "/plan");
    EXPECT_EQ(plan.status, 201u) << plan.body;
    complete_plan(claim_job());
    auto apply = apply_run(plan.str("id"));
    EXPECT_EQ(apply.status, 201u) << apply.body;
    AgentJob job = claim_job();
    EXPECT_EQ(job.run_id, apply.str("id"));
    return job;
  }

  Reply phase(const AgentJob& job, const std::string& phase = "apply",
              std::optional<std::int64_t> attempt = std::nullopt) {
    return agent(http::verb::post, "/agent/v1/runs/" + job.run_id + "/phase",
                 json::object{{"leaseToken", job.lease},
                              {"attempt", attempt.value_or(job.manifest.attempt)},
                              {"phase", phase}});
  }

  bool nothing_to_claim() {
    auto r = agent(http::verb::post, "/agent/v1/claim", json::object{{"freeSlots", 2}});
    return r.status == 200u && r.obj().at("jobs").as_array().empty();
  }

  Reply capsule() { return api(http::verb::get, "/api/v1/capsules/" + capsule_); }

  // The activity events of the workspace with this action, newest first.
  json::array activity(const std::string& action) {
    auto r = api(http::verb::get, "/api/v1/workspaces/" + workspace_ + "/activity?limit=200");
    EXPECT_EQ(r.status, 200u) << r.body;
    json::array out;
    for (const auto& e : r.obj().at("events").as_array())
      if (e.at("action") == action.c_str()) out.push_back(e);
    return out;
  }

  std::string workspace_;
  std::string capsule_;
};

TEST_F(CrashSafetyApiTest, PhaseAnnouncesTheApplyAndRenewsTheLease) {
  AgentJob job = claimed_apply();
  clock_.advance(20);
  auto started = phase(job);
  ASSERT_EQ(started.status, 200u) << started.body;
  EXPECT_EQ(started.json, (json::object{{"phase", "apply"},
                                        {"leaseExpiresAt", clock_.now_unix() + 60},
                                        {"cancelRequested", false}}));
  EXPECT_EQ(phase(job).status, 200u) << "idempotent";
  auto announced = activity("run.apply_started");
  ASSERT_EQ(announced.size(), 1u);
  EXPECT_EQ(announced[0].at("runId"), job.run_id.c_str());
  EXPECT_EQ(announced[0].at("detail"), (json::object{{"agentId", agent_id_}, {"attempt", 1}}));

  auto plan_phase = phase(job, "plan");
  EXPECT_EQ(plan_phase.status, 400u) << plan_phase.body;
  EXPECT_EQ(error_code(plan_phase), "invalid_argument");
  auto no_attempt = agent(http::verb::post, "/agent/v1/runs/" + job.run_id + "/phase",
                          json::object{{"leaseToken", job.lease}, {"phase", "apply"}});
  EXPECT_EQ(no_attempt.status, 400u) << no_attempt.body;
  auto stale = phase({job.run_id, "not-the-lease", job.manifest}, "apply");
  EXPECT_EQ(stale.status, 409u) << stale.body;
  EXPECT_EQ(error_code(stale), "lease_lost");
  EXPECT_EQ(phase(job, "apply", 2).status, 409u);
  EXPECT_EQ(phase({"run_missing", job.lease, job.manifest}).status, 404u);
  EXPECT_EQ(send(http::verb::post, "/agent/v1/runs/" + job.run_id + "/phase",
                 json::serialize(json::object{{"leaseToken", job.lease}, {"attempt", 1},
                                              {"phase", "apply"}}),
                 {}).status, 401u);
}

TEST_F(CrashSafetyApiTest, OnlyAnApplyWithALiveLeaseMayStart) {
  auto plan = api(http::verb::post, "/api/v1/capsules/" + capsule_ + "/plan");
  ASSERT_EQ(plan.status, 201u);
  AgentJob plan_job = claim_job();
  auto refused = phase(plan_job);
  EXPECT_EQ(refused.status, 400u) << refused.body;
  EXPECT_EQ(error_code(refused), "invalid_argument");
  complete_plan(plan_job);
  ASSERT_EQ(apply_run(plan.str("id")).status, 201u);
  AgentJob first = claim_job();
  clock_.advance(61);
  auto late = phase(first);
  EXPECT_EQ(late.status, 409u) << late.body;
  EXPECT_EQ(error_code(late), "lease_lost");

  AgentJob second = claim_job();  // not announced, so dispatched again
  ASSERT_EQ(second.run_id, first.run_id);
  EXPECT_EQ(second.manifest.attempt, 2);
  EXPECT_EQ(phase(first).status, 409u);
  EXPECT_EQ(phase(second).status, 200u);
  auto fenced = activity("run.fenced");
  ASSERT_EQ(fenced.size(), 2u);
  EXPECT_EQ(fenced[0].at("detail"), (json::object{{"agentId", agent_id_}, {"attempt", 1},
                                                  {"currentAttempt", 2}, {"call", "phase"}}));
  EXPECT_EQ(fenced[0].at("actor"), ("agent:" + agent_id_).c_str());
}

TEST_F(CrashSafetyApiTest, StrandedApplyIsKeptForItsAgentAndItsPartialStateNeedsAttention) {
  plan_and_apply(capsule_, "state-1");
  AgentJob job = claimed_apply();
  ASSERT_EQ(phase(job).status, 200u);
  auto idle = capsule();
  EXPECT_EQ(idle.obj().at("needsAttention"), false) << idle.body;
  EXPECT_EQ(idle.obj().at("attention"), json::array{});

  // The agent dies in `tofu apply`. Nobody else gets the Run, nor any later Run of the Capsule.
  clock_.advance(61);
  auto later = api(http::verb::post, "/api/v1/capsules/" + capsule_ + "/plan");
  ASSERT_EQ(later.status, 201u);
  EXPECT_TRUE(nothing_to_claim());
  auto stranded = capsule();
  ASSERT_EQ(stranded.status, 200u) << stranded.body;
  EXPECT_EQ(stranded.obj().at("needsAttention"), true);
  const auto& entries = stranded.obj().at("attention").as_array();
  ASSERT_EQ(entries.size(), 1u) << stranded.body;
  EXPECT_EQ(entries[0].at("code"), "apply_stranded");
  EXPECT_EQ(entries[0].at("runId"), job.run_id.c_str());
  EXPECT_EQ(entries[0].at("agentId"), agent_id_.c_str());
  EXPECT_NE(json::value_to<std::string>(entries[0].at("message")).find("takosumi-agent recover"),
            std::string::npos);
  auto list = api(http::verb::get, "/api/v1/workspaces/" + workspace_ + "/capsules");
  EXPECT_EQ(list.obj().at("capsules").at(0), stranded.json);
  auto run = api(http::verb::get, "/api/v1/runs/" + job.run_id);
  EXPECT_EQ(run.str("status"), "running");
  EXPECT_EQ(run.obj().at("attempt"), 1);

  // Restarted, the agent uploads what tofu persisted and reports the apply as interrupted.
  const std::string text = "half-applied state";
  auto up = upload(job.run_id, job.lease, "state", envelope(job.manifest, "state", text, 2));
  ASSERT_EQ(up.status, 200u) << up.body;
  json::object report{{"leaseToken", job.lease}, {"attempt", 1}, {"status", "failed"},
                      {"failure", json::object{{"code", "interrupted"},
                                               {"message", "the agent stopped during tofu apply"}}},
                      {"newState", json::object{{"artifactSha256", up.str("sha256")},
                                                {"plaintextSha256", crypto::sha256_hex(text)},
                                                {"serial", 2}, {"lineage", "lineage-1"},
                                                {"priorGeneration", 1}}},
                      {"outputs", json::object{{"url", "half"}}}};
  auto done = agent(http::verb::post, "/agent/v1/runs/" + job.run_id + "/complete", report);
  ASSERT_EQ(done.status, 200u) << done.body;

  auto versions = state_versions(capsule_);
  ASSERT_EQ(versions.size(), 2u);
  EXPECT_EQ(versions[0].at("partial"), true);
  EXPECT_EQ(versions[0].at("generation"), 2);
  EXPECT_EQ(versions[1].at("partial"), false);
  const std::string kept = json::value_to<std::string>(versions[0].at("id"));
  EXPECT_EQ(api(http::verb::get, "/api/v1/state-versions/" + kept).obj().at("partial"), true);
  auto outputs = api(http::verb::get, "/api/v1/capsules/" + capsule_ + "/outputs");
  EXPECT_EQ(outputs.obj().at("outputs"), (json::object{{"url", "state-1"}}));
  auto partial = capsule();
  EXPECT_EQ(partial.obj().at("needsAttention"), true);
  EXPECT_EQ(partial.obj().at("attention"),
            (json::array{json::object{
                {"code", "partial_state"}, {"runId", job.run_id}, {"stateVersionId", kept},
                {"generation", 2},
                {"message", "the current StateVersion was kept from an apply that did not finish"
                            " (interrupted); review it and plan again"}}}));

  // The Capsule is free again; a plan and apply that succeed clear the attention.
  play_plan_and_apply(later.str("id"), "state-3");
  auto clear = capsule();
  EXPECT_EQ(clear.obj().at("needsAttention"), false) << clear.body;
  EXPECT_EQ(clear.obj().at("attention"), json::array{});
  EXPECT_EQ(state_versions(capsule_)[0].at("partial"), false);
}

TEST_F(CrashSafetyApiTest, UploadsAreIdempotentAndFencedOnesAreAudited) {
  AgentJob job = claimed_apply();
  const std::string bytes = envelope(job.manifest, "state", "state text", 1);
  auto first = upload(job.run_id, job.lease, "state", bytes);
  ASSERT_EQ(first.status, 200u) << first.body;
  auto again = upload(job.run_id, job.lease, "state", bytes);
  ASSERT_EQ(again.status, 200u) << again.body;
  EXPECT_EQ(again.json, first.json);
  EXPECT_EQ(activity("artifact.uploaded").size(), 2u) << "one for the plan, one for the state";

  clock_.advance(61);
  AgentJob second = claim_job();  // the apply never started, so it is dispatched again
  ASSERT_EQ(second.run_id, job.run_id);
  auto fenced = upload(job.run_id, job.lease, "state", bytes);
  EXPECT_EQ(fenced.status, 409u) << fenced.body;
  EXPECT_EQ(error_code(fenced), "lease_lost");
  auto events = activity("run.fenced");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].at("detail"), (json::object{{"agentId", agent_id_}, {"attempt", nullptr},
                                                  {"currentAttempt", 2}, {"call", "upload"}}));
  EXPECT_EQ(upload("run_missing", job.lease, "state", bytes).status, 404u);
  EXPECT_EQ(activity("run.fenced").size(), 1u);
}

}  // namespace
}  // namespace takosumi::controlplane
