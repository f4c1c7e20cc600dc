// StateVersion history over the real HTTP API with the test playing the agent: rollback plans,
// the data-loss rule of apply, read-only drift checks, destroy, and paged history.
#include "controlplane/testing/http_api_fixture.hpp"
#include "tests/support/test_git_repo.hpp"

namespace takosumi::controlplane {
namespace {

using takosumi::testing::TestGitRepo;

json::array one_mark(const std::string& address) {
  return {json::object{{"address", address}, {"type", "aws_db_instance"}, {"action", "replace"},
                       {"reason", "type matches *_db_instance"}}};
}

class StateHistoryApiTest : public HttpApiTest {
 protected:
  void SetUp() override {
    HttpApiTest::SetUp();
    register_agent();
    workspace_ = create_workspace();
  }

  Reply post(const std::string& target) { return api(http::verb::post, target); }
  Reply get(const std::string& target) { return api(http::verb::get, target); }
  // True when a claim finds no job (claims it otherwise, so only for "nothing may be queued").
  bool nothing_queued() {
    auto r = agent(http::verb::post, "/agent/v1/claim", json::object{{"freeSlots", 1}});
    return r.status == 200u && r.obj().at("jobs").as_array().empty();
  }

  std::string workspace_;
};

TEST_F(StateHistoryApiTest, RollbackPlanRunsAtTheTargetsCommitAgainstTheCurrentState) {
  TestGitRepo repo(dir_.path() / "repo");
  const std::string c1 = repo.commit({{"infra/main.tf", "# v1\n"}});
  const std::string capsule = create_capsule(workspace_, "app", repo.url(), "main");
  plan_and_apply(capsule, "state-1");
  const std::string c2 = repo.commit({{"infra/main.tf", "# v2\n"}});
  plan_and_apply(capsule, "state-2");
  auto before = state_versions(capsule);
  ASSERT_EQ(before.size(), 2u);
  const std::string gen1 = json::value_to<std::string>(before[1].at("id"));
  const std::string gen2 = json::value_to<std::string>(before[0].at("id"));
  EXPECT_EQ(before[1].at("sourceCommit"), c1.c_str());
  EXPECT_TRUE(before[1].at("restoredFrom").is_null());

  auto rollback = post("/api/v1/state-versions/" + gen1 + "/rollback-plan");
  ASSERT_EQ(rollback.status, 201u) << rollback.body;
  EXPECT_EQ(rollback.str("type"), "plan");
  EXPECT_EQ(rollback.str("status"), "queued");
  EXPECT_EQ(rollback.str("sourceCommit"), c1);
  EXPECT_EQ(rollback.str("restoresStateVersionId"), gen1);
  EXPECT_EQ(state_versions(capsule), before) << "selecting a StateVersion changes nothing";

  // The agent plans at the target's commit, starting from the current state (generation 2).
  AgentJob job = claim_job();
  EXPECT_EQ(job.run_id, rollback.str("id"));
  EXPECT_EQ(job.manifest.type, protocol::RunType::plan);
  EXPECT_EQ(job.manifest.source.commit, c1);
  ASSERT_TRUE(job.manifest.prior_state);
  EXPECT_EQ(job.manifest.prior_state->state_version_id, gen2);
  complete_plan(job);
  auto apply = apply_run(rollback.str("id"));
  ASSERT_EQ(apply.status, 201u) << apply.body;
  EXPECT_EQ(apply.str("restoresStateVersionId"), gen1);
  complete_apply(claim_job(), "state-1-again");

  auto after = state_versions(capsule);
  ASSERT_EQ(after.size(), 3u);
  EXPECT_EQ(after[0].at("generation"), 3);
  EXPECT_EQ(after[0].at("restoredFrom"), gen1.c_str());
  EXPECT_EQ(after[0].at("sourceCommit"), c1.c_str());
  auto one = get("/api/v1/state-versions/" + json::value_to<std::string>(after[0].at("id")));
  ASSERT_EQ(one.status, 200u) << one.body;
  EXPECT_EQ(one.json, after[0]);

  // Rolling back the rollback is the same operation and appends generation 4.
  auto undo = post("/api/v1/state-versions/" + gen2 + "/rollback-plan");
  ASSERT_EQ(undo.status, 201u) << undo.body;
  EXPECT_EQ(undo.str("sourceCommit"), c2);
  play_plan_and_apply(undo.str("id"), "state-2-again");
  auto last = state_versions(capsule);
  ASSERT_EQ(last.size(), 4u);
  EXPECT_EQ(last[0].at("restoredFrom"), gen2.c_str());
  EXPECT_EQ(json::array(last.begin() + 1, last.end()), after) << "history was rewritten";

  EXPECT_EQ(post("/api/v1/state-versions/sv_missing/rollback-plan").status, 404u);
}

TEST_F(StateHistoryApiTest, ApplyRefusesDataLossUnlessAccepted) {
  const std::string capsule = create_capsule(workspace_, "db");
  auto first = plan_and_apply(capsule, "state-1");  // no marks: an empty body applies
  EXPECT_EQ(first.obj().at("dataLossAccepted"), false);
  EXPECT_EQ(first.obj().at("dataLoss"), json::array{});

  auto plan = post("/api/v1/capsules/" + capsule + "/plan");
  ASSERT_EQ(plan.status, 201u);
  json::array marks = one_mark("aws_db_instance.main");
  marks.push_back(one_mark("aws_s3_bucket.files")[0]);
  complete_plan(claim_job(), marks);
  auto planned = get("/api/v1/runs/" + plan.str("id"));
  EXPECT_EQ(planned.obj().at("dataLoss"), marks);

  for (const json::object& body : {json::object{}, json::object{{"acceptDataLoss", false}}}) {
    auto refused = apply_run(plan.str("id"), body);
    EXPECT_EQ(refused.status, 409u) << refused.body;
    EXPECT_EQ(error_code(refused), "data_loss_not_accepted");
    const std::string message = json::value_to<std::string>(refused.obj().at("error").at("message"));
    EXPECT_NE(message.find("aws_db_instance.main"), std::string::npos) << message;
    EXPECT_NE(message.find("aws_s3_bucket.files"), std::string::npos) << message;
    EXPECT_NE(message.find("acceptDataLoss"), std::string::npos) << message;
  }
  EXPECT_EQ(apply_run(plan.str("id"), {{"acceptDataLoss", "yes"}}).status, 400u);
  EXPECT_TRUE(nothing_queued()) << "a refused apply queues nothing";
  EXPECT_EQ(state_versions(capsule).size(), 1u);

  auto accepted = apply_run(plan.str("id"), {{"acceptDataLoss", true}});
  ASSERT_EQ(accepted.status, 201u) << accepted.body;
  EXPECT_EQ(accepted.obj().at("dataLossAccepted"), true);
  EXPECT_EQ(accepted.obj().at("dataLoss"), marks);
  complete_apply(claim_job(), "state-2");
  EXPECT_EQ(state_versions(capsule).size(), 2u);
}

TEST_F(StateHistoryApiTest, DriftCheckIsReadOnlyAndPinnedToTheCurrentVersion) {
  const std::string capsule = create_capsule(workspace_, "app");
  const std::string empty = create_capsule(workspace_, "empty");
  auto none = post("/api/v1/capsules/" + capsule + "/drift-check");
  EXPECT_EQ(none.status, 409u) << none.body;
  EXPECT_EQ(error_code(none), "no_state_version");
  EXPECT_EQ(error_code(post("/api/v1/workspaces/" + workspace_ + "/drift-check")), "no_state_version");

  plan_and_apply(capsule, "state-1");
  auto current = state_versions(capsule)[0].as_object();
  auto drift = post("/api/v1/capsules/" + capsule + "/drift-check");
  ASSERT_EQ(drift.status, 201u) << drift.body;
  EXPECT_EQ(drift.str("type"), "drift_check");
  EXPECT_EQ(drift.obj().at("priorStateVersionId"), current.at("id"));
  EXPECT_EQ(drift.obj().at("sourceCommit"), current.at("sourceCommit"));

  AgentJob job = claim_job();
  ASSERT_EQ(job.run_id, drift.str("id"));
  EXPECT_EQ(job.manifest.type, protocol::RunType::drift_check);
  ASSERT_TRUE(job.manifest.prior_state);
  EXPECT_EQ(job.manifest.prior_state->state_version_id, current.at("id").as_string());
  EXPECT_EQ(job.manifest.source.commit, current.at("sourceCommit").as_string());
  EXPECT_FALSE(job.manifest.saved_plan);
  EXPECT_EQ(download(job.run_id, job.lease, "prior_state").status, 200u);

  // Never uploads, never appends.
  const std::string bytes = envelope(job.manifest, "state", "refreshed state", 2);
  EXPECT_EQ(upload(job.run_id, job.lease, "state", bytes).status, 403u);
  EXPECT_EQ(upload(job.run_id, job.lease, "plan", envelope(job.manifest, "plan", "p", 0)).status, 403u);
  json::object report{{"leaseToken", job.lease}, {"attempt", 1}, {"status", "succeeded"},
                      {"hasChanges", true},
                      {"drift", json::object{{"status", "drift"},
                                             {"resources", json::array{json::object{
                                                 {"address", "local_file.data"}, {"type", "local_file"},
                                                 {"action", "update"}, {"attributes", json::array{"content"}}}}}}}};
  auto with_state = report;
  with_state["newState"] = json::object{{"artifactSha256", std::string(64, 'a')},
                                        {"plaintextSha256", std::string(64, 'b')}, {"serial", 2},
                                        {"lineage", "lineage-1"}, {"priorGeneration", 1}};
  EXPECT_EQ(agent(http::verb::post, "/agent/v1/runs/" + job.run_id + "/complete", with_state).status, 400u);
  ASSERT_EQ(agent(http::verb::post, "/agent/v1/runs/" + job.run_id + "/complete", report).status, 200u);

  auto checked = get("/api/v1/runs/" + job.run_id);
  EXPECT_EQ(checked.str("status"), "succeeded");
  EXPECT_EQ(checked.obj().at("drift"), report.at("drift"));
  EXPECT_TRUE(checked.obj().at("stateVersionId").is_null());
  EXPECT_EQ(state_versions(capsule).size(), 1u);
  EXPECT_EQ(get("/api/v1/capsules/" + capsule + "/outputs").obj().at("outputs").at("url"), "state-1");

  // Never applied.
  auto refused = apply_run(job.run_id, {{"acceptDataLoss", true}});
  EXPECT_EQ(refused.status, 409u) << refused.body;
  EXPECT_NE(refused.body.find("read-only"), std::string::npos) << refused.body;
  EXPECT_TRUE(nothing_queued());

  // A workspace check makes one Run per Capsule with a StateVersion and names the others.
  auto all = post("/api/v1/workspaces/" + workspace_ + "/drift-check");
  ASSERT_EQ(all.status, 201u) << all.body;
  ASSERT_EQ(all.obj().at("runs").as_array().size(), 1u);
  EXPECT_EQ(all.obj().at("runs").at(0).at("capsuleId"), capsule.c_str());
  ASSERT_EQ(all.obj().at("skipped").as_array().size(), 1u);
  EXPECT_EQ(all.obj().at("skipped").at(0).at("capsuleId"), empty.c_str());
}

TEST_F(StateHistoryApiTest, DriftCheckWhoseVersionWasSupersededFailsInsteadOfRunning) {
  const std::string capsule = create_capsule(workspace_, "app");
  plan_and_apply(capsule, "state-1");
  auto plan = post("/api/v1/capsules/" + capsule + "/plan");
  complete_plan(claim_job());
  ASSERT_EQ(apply_run(plan.str("id")).status, 201u);
  auto drift = post("/api/v1/capsules/" + capsule + "/drift-check");  // pinned to generation 1
  ASSERT_EQ(drift.status, 201u);
  complete_apply(claim_job(), "state-2");  // the apply was queued first: generation 2

  EXPECT_TRUE(nothing_queued());
  auto failed = get("/api/v1/runs/" + drift.str("id"));
  EXPECT_EQ(failed.str("status"), "failed");
  EXPECT_EQ(failed.obj().at("failure").at("code"), "state_version_superseded");
}

TEST_F(StateHistoryApiTest, DestroyWaitsForApplyAndAppendsTheNextGeneration) {
  const std::string capsule = create_capsule(workspace_, "app");
  auto nothing = api(http::verb::delete_, "/api/v1/capsules/" + capsule);
  EXPECT_EQ(nothing.status, 409u) << nothing.body;
  EXPECT_EQ(error_code(nothing), "no_state_version");
  plan_and_apply(capsule, "state-1");

  auto destroy = api(http::verb::delete_, "/api/v1/capsules/" + capsule);
  ASSERT_EQ(destroy.status, 201u) << destroy.body;
  EXPECT_EQ(destroy.str("type"), "destroy_plan");
  AgentJob job = claim_job();
  EXPECT_EQ(job.manifest.type, protocol::RunType::destroy_plan);
  ASSERT_TRUE(job.manifest.prior_state);
  EXPECT_EQ(job.manifest.prior_state->generation, 1);
  complete_plan(job, one_mark("aws_db_instance.main"));
  EXPECT_TRUE(nothing_queued()) << "a destroy never applies by itself";
  EXPECT_EQ(state_versions(capsule).size(), 1u);

  // A consumer that came between the destroy plan and its apply holds the producer too.
  const std::string consumer = create_capsule(workspace_, "web");
  auto dependency =
      api(http::verb::post, "/api/v1/capsules/" + consumer + "/dependencies",
          json::object{{"producerCapsuleId", capsule},
                       {"outputs", json::object{{"app_url", json::object{{"from", "url"}}}}}});
  ASSERT_EQ(dependency.status, 201u) << dependency.body;
  auto held = apply_run(job.run_id, {{"acceptDataLoss", true}});
  EXPECT_EQ(held.status, 409u) << held.body;
  EXPECT_NE(held.body.find("still has consumers: " + consumer), std::string::npos) << held.body;
  ASSERT_EQ(api(http::verb::delete_, "/api/v1/dependencies/" + dependency.str("id")).status, 204u);

  EXPECT_EQ(error_code(apply_run(job.run_id)), "data_loss_not_accepted");
  auto apply = apply_run(job.run_id, {{"acceptDataLoss", true}});
  ASSERT_EQ(apply.status, 201u) << apply.body;
  AgentJob apply_job = claim_job();
  EXPECT_EQ(apply_job.manifest.type, protocol::RunType::apply);
  complete_apply(apply_job, "");

  auto history = state_versions(capsule);
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0].at("generation"), 2);
  EXPECT_EQ(history[0].at("createdByRunId"), apply.obj().at("id"));
  auto destroyed = get("/api/v1/capsules/" + capsule);
  ASSERT_EQ(destroyed.status, 200u);
  EXPECT_EQ(destroyed.obj().at("destroyed"), true);
  EXPECT_EQ(api(http::verb::delete_, "/api/v1/capsules/" + capsule).status, 409u);
  EXPECT_EQ(error_code(post("/api/v1/capsules/" + capsule + "/drift-check")), "no_state_version");

  // The next plan simply starts from the current (empty) StateVersion.
  auto next = post("/api/v1/capsules/" + capsule + "/plan");
  ASSERT_EQ(next.status, 201u);
  AgentJob next_job = claim_job();
  ASSERT_TRUE(next_job.manifest.prior_state);
  EXPECT_EQ(next_job.manifest.prior_state->state_version_id, history[0].at("id").as_string());
  complete_plan(next_job);
  ASSERT_EQ(apply_run(next.str("id")).status, 201u);
  complete_apply(claim_job(), "state-3");
  EXPECT_EQ(get("/api/v1/capsules/" + capsule).obj().at("destroyed"), false);
}

TEST_F(StateHistoryApiTest, StateVersionsPageWithAnOpaqueCursor) {
  const std::string capsule = create_capsule(workspace_, "app");
  const std::string other = create_capsule(workspace_, "other");
  for (int i = 1; i <= 5; ++i) plan_and_apply(capsule, "state-" + std::to_string(i));

  std::vector<std::int64_t> seen;
  std::string cursor;
  int pages = 0;
  for (; pages < 10; ++pages) {
    auto page = get("/api/v1/capsules/" + capsule + "/state-versions?limit=2" +
                    (cursor.empty() ? "" : "&cursor=" + cursor));
    ASSERT_EQ(page.status, 200u) << page.body;
    for (const auto& v : page.obj().at("stateVersions").as_array())
      seen.push_back(v.at("generation").as_int64());
    const auto& next = page.obj().at("nextCursor");
    if (next.is_null()) break;
    cursor = json::value_to<std::string>(next);
  }
  EXPECT_EQ(pages + 1, 3);
  EXPECT_EQ(seen, (std::vector<std::int64_t>{5, 4, 3, 2, 1}));
  auto exact = get("/api/v1/capsules/" + capsule + "/state-versions?limit=5");
  EXPECT_TRUE(exact.obj().at("nextCursor").is_null()) << "no cursor when nothing follows";

  auto foreign = get("/api/v1/capsules/" + other + "/state-versions?cursor=" + cursor);
  EXPECT_EQ(foreign.status, 400u) << foreign.body;
  EXPECT_EQ(get("/api/v1/capsules/" + capsule + "/state-versions?cursor=3").status, 400u);
  EXPECT_EQ(get("/api/v1/capsules/" + capsule + "/state-versions?limit=0").status, 400u);
  EXPECT_EQ(get("/api/v1/capsules/" + capsule + "/state-versions?limit=101").status, 400u);
  EXPECT_EQ(get("/api/v1/state-versions/sv_missing").status, 404u);

  auto current = get("/api/v1/workspaces/" + workspace_ + "/current-state-versions");
  ASSERT_EQ(current.status, 200u) << current.body;
  const auto& list = current.obj().at("capsules").as_array();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].at("capsuleId"), capsule.c_str());
  EXPECT_EQ(list[0].at("stateVersion").at("generation"), 5);
  EXPECT_EQ(list[1].at("capsuleId"), other.c_str());
  EXPECT_TRUE(list[1].at("stateVersion").is_null());
  EXPECT_EQ(get("/api/v1/workspaces/ws_missing/current-state-versions").status, 404u);
}

}  // namespace
}  // namespace takosumi::controlplane
