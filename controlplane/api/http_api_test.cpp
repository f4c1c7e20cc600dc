// The real control plane on 127.0.0.1:0 in a thread, driven over loopback by a tiny Beast client:
// auth and error shapes, limits, and a whole plan → apply → plan cycle the way an agent does it,
// with real envelopes and manifest verification.
#include "controlplane/testing/http_api_fixture.hpp"
#include "controlplane/testing/http_wire.hpp"
#include "protocol/run_report.hpp"

namespace takosumi::controlplane {
namespace {

TEST_F(HttpApiTest, PublicApiNeedsTheToken) {
  auto missing = send(http::verb::get, "/api/v1/workspaces", {}, {});
  EXPECT_EQ(missing.status, 401u);
  EXPECT_EQ(missing.obj().at("error").at("code"), "unauthorized");
  auto wrong = send(http::verb::get, "/api/v1/workspaces", {}, {{"authorization", "Bearer nope"}});
  EXPECT_EQ(wrong.status, 401u);
  EXPECT_EQ(api(http::verb::get, "/api/v1/workspaces").status, 200u);
  auto agent_without = send(http::verb::post, "/agent/v1/claim", "{}", {});
  EXPECT_EQ(agent_without.status, 401u);
}

TEST_F(HttpApiTest, ErrorsAreJsonWithCodeAndMessage) {
  auto run = api(http::verb::get, "/api/v1/runs/run_missing");
  EXPECT_EQ(run.status, 404u);
  ASSERT_TRUE(run.json.is_object()) << run.body;
  EXPECT_EQ(run.obj().at("error").at("code"), "not_found");
  EXPECT_NE(run.obj().at("error").at("message").as_string().find("run_missing"), std::string::npos);
  auto route = api(http::verb::get, "/api/v1/nothing-here");
  EXPECT_EQ(route.status, 404u);
  EXPECT_EQ(route.obj().at("error").at("code"), "not_found");
  // A known path with a method it does not take: 405, with what it takes, before authentication.
  auto method = send(http::verb::delete_, "/api/v1/workspaces", {}, {});
  EXPECT_EQ(method.status, 405u) << method.body;
  EXPECT_EQ(method.obj().at("error").at("code"), "method_not_allowed");
  EXPECT_EQ(method.allow, "GET, POST");
  EXPECT_NE(method.obj().at("error").at("message").as_string().find("it takes GET, POST"),
            std::string::npos) << method.body;
  auto bad = api(http::verb::post, "/api/v1/workspaces", json::object{{"name", "Not Valid"}});
  EXPECT_EQ(bad.status, 400u);
  EXPECT_EQ(bad.obj().at("error").at("code"), "invalid_argument");
  auto not_json = send(http::verb::post, "/api/v1/workspaces", "{oops");
  EXPECT_EQ(not_json.status, 400u);
  auto dup = api(http::verb::post, "/api/v1/workspaces", json::object{{"name", "a"}});
  EXPECT_EQ(dup.status, 201u);
  EXPECT_EQ(api(http::verb::post, "/api/v1/workspaces", json::object{{"name", "a"}}).status, 409u);
}

TEST_F(HttpApiTest, OversizedJsonIs413) {
  auto r = send(http::verb::post, "/api/v1/workspaces", std::string(2 << 20, ' '));
  EXPECT_EQ(r.status, 413u);
  EXPECT_EQ(r.obj().at("error").at("code"), "payload_too_large");
}

TEST_F(HttpApiTest, KeepsAuthenticatedConnectionsAlive) {
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  socket.connect({asio::ip::make_address("127.0.0.1"), port_});
  beast::flat_buffer buffer;
  for (int i = 0; i < 3; ++i) {
    http::write(socket, make_request(http::verb::get, "/api/v1/workspaces", {},
                                     {{"authorization", std::string("Bearer ") + kApiToken}}));
    EXPECT_EQ(read_reply(socket, buffer).status, 200u);
  }
}

TEST_F(HttpApiTest, RegisterRefusesAnUnknownPoolToken) {
  auto r = send(http::verb::post, "/agent/v1/register",
                json::serialize(json::object{{"name", "w"},
                                             {"boxPublicKey", box_.public_key.to_base64()},
                                             {"signPublicKey", sign_.public_key.to_base64()}}),
                {{"authorization", "Bearer guess"}});
  EXPECT_EQ(r.status, 401u);
  EXPECT_EQ(error_code(r), "unauthorized");
}

TEST_F(HttpApiTest, LongPollWakesUpWhenARunIsQueued) {
  register_agent();
  const std::string capsule = create_capsule();
  Reply polled;
  std::thread poller([&] {
    polled = agent(http::verb::post, "/agent/v1/claim", json::object{{"freeSlots", 1}, {"waitSeconds", 30}});
  });
  auto plan = api(http::verb::post, "/api/v1/capsules/" + capsule + "/plan");
  poller.join();
  ASSERT_EQ(plan.status, 201u) << plan.body;
  ASSERT_EQ(polled.status, 200u) << polled.body;
  ASSERT_EQ(polled.obj().at("jobs").as_array().size(), 1u);
  EXPECT_EQ(polled.obj().at("jobs").at(0).at("runId"), plan.obj().at("id"));
}

TEST_F(HttpApiTest, PlanApplyPlanRoundTrip) {
  register_agent();
  const std::string capsule = create_capsule();
  auto plan = api(http::verb::post, "/api/v1/capsules/" + capsule + "/plan");
  ASSERT_EQ(plan.status, 201u) << plan.body;
  EXPECT_EQ(plan.str("status"), "queued");
  EXPECT_EQ(plan.str("sourceCommit"), std::string(40, 'c'));

  // Plan run: claim, log, heartbeat, upload the encrypted plan, complete.
  auto [plan_job, plan_manifest] = claim();
  const std::string plan_id = plan.str("id");
  const std::string lease = json::value_to<std::string>(plan_job.at("leaseToken"));
  EXPECT_EQ(plan_manifest.run_id, plan_id);
  EXPECT_EQ(plan_manifest.source.module_path, "infra");
  EXPECT_FALSE(plan_manifest.prior_state);
  EXPECT_EQ(plan_manifest.output_allowlist.at("url").from, "app_url");
  const std::string plan_text = std::string("plan file with ") + kSecretMarker;
  const std::string plan_env = envelope(plan_manifest, "plan", plan_text, 0);
  EXPECT_EQ(upload(plan_id, lease, "plan", plan_env, std::string(64, '0')).status, 400u);
  EXPECT_EQ(upload(plan_id, "stale", "plan", plan_env).status, 409u);
  EXPECT_EQ(upload(plan_id, lease, "state", plan_env).status, 400u);  // plans upload plans
  auto foreign = plan_manifest;
  foreign.capsule_id = "cap_other";
  EXPECT_EQ(upload(plan_id, lease, "plan", envelope(foreign, "plan", plan_text, 0)).status, 400u);
  EXPECT_EQ(upload(plan_id, lease, "plan", "not an envelope").status, 400u);
  auto up = upload(plan_id, lease, "plan", plan_env);
  ASSERT_EQ(up.status, 200u) << up.body;
  EXPECT_EQ(upload(plan_id, lease, "plan", plan_env).body, up.body);  // idempotent
  auto log = agent(http::verb::post, "/agent/v1/runs/" + plan_id + "/logs",
                   json::object{{"leaseToken", lease}, {"seq", 0}, {"text", "Plan: 1 to add\n"}});
  EXPECT_EQ(log.status, 200u) << log.body;
  EXPECT_EQ(log.obj().at("nextSeq"), 1);
  auto beat = agent(http::verb::post, "/agent/v1/runs/" + plan_id + "/heartbeat", json::object{{"leaseToken", lease}});
  EXPECT_EQ(beat.status, 200u) << beat.body;
  EXPECT_EQ(beat.obj().at("cancelRequested"), false);
  json::object plan_report{{"leaseToken", lease}, {"attempt", 1}, {"status", "succeeded"},
                           {"hasChanges", true},
                           {"changeSummary", json::object{{"add", 1}, {"change", 0}, {"destroy", 0}, {"replace", 0}}},
                           {"planDigest", crypto::sha256_hex(plan_text)},
                           {"planArtifactSha256", up.str("sha256")},
                           {"tofuVersion", "1.12.6"}};
  auto done = agent(http::verb::post, "/agent/v1/runs/" + plan_id + "/complete", plan_report);
  ASSERT_EQ(done.status, 200u) << done.body;
  EXPECT_EQ(agent(http::verb::post, "/agent/v1/runs/" + plan_id + "/complete", plan_report).status, 200u);
  auto planned = api(http::verb::get, "/api/v1/runs/" + plan_id);
  EXPECT_EQ(planned.str("status"), "succeeded");
  EXPECT_EQ(planned.obj().at("hasChanges"), true);
  EXPECT_EQ(planned.obj().at("changeSummary").at("add"), 1);
  EXPECT_FALSE(planned.obj().contains("outputs"));
  auto logs = api(http::verb::get, "/api/v1/runs/" + plan_id + "/logs");
  EXPECT_EQ(logs.obj().at("chunks").at(0).at("text"), "Plan: 1 to add\n");

  // Apply run: the saved plan's DEK arrives re-sealed to this agent.
  auto apply = api(http::verb::post, "/api/v1/runs/" + plan_id + "/apply");
  ASSERT_EQ(apply.status, 201u) << apply.body;
  EXPECT_EQ(api(http::verb::post, "/api/v1/runs/" + plan_id + "/apply").status, 409u);
  auto [apply_job, apply_manifest] = claim();
  const std::string apply_id = apply.str("id");
  const std::string apply_lease = json::value_to<std::string>(apply_job.at("leaseToken"));
  ASSERT_TRUE(apply_manifest.saved_plan);
  EXPECT_EQ(apply_manifest.saved_plan->digest, crypto::sha256_hex(plan_text));
  auto saved = download(apply_id, apply_lease, "plan");
  ASSERT_EQ(saved.status, 200u);
  EXPECT_EQ(open(saved.body, apply_manifest.saved_plan->sealed_dek, "plan"), plan_text);
  const std::string state_text = std::string("{\"state\":\"") + kSecretMarker + "\"}";
  auto state_up = upload(apply_id, apply_lease, "state", envelope(apply_manifest, "state", state_text, 1));
  ASSERT_EQ(state_up.status, 200u) << state_up.body;
  json::object apply_report{{"leaseToken", apply_lease}, {"attempt", 1}, {"status", "succeeded"},
                            {"newState", json::object{{"artifactSha256", state_up.str("sha256")},
                                                      {"plaintextSha256", crypto::sha256_hex(state_text)},
                                                      {"serial", 1}, {"lineage", "lineage-1"},
                                                      {"priorGeneration", 0}}},
                            {"outputs", json::object{{"url", "https://app.example"}, {"db_password", "x"}}}};
  auto stale = apply_report;
  stale["newState"].as_object()["priorGeneration"] = 3;
  auto fenced = agent(http::verb::post, "/agent/v1/runs/" + apply_id + "/complete", stale);
  EXPECT_EQ(fenced.status, 409u) << fenced.body;
  EXPECT_EQ(fenced.obj().at("error").at("code"), "conflict");
  ASSERT_EQ(agent(http::verb::post, "/agent/v1/runs/" + apply_id + "/complete", apply_report).status, 200u);
  ASSERT_EQ(agent(http::verb::post, "/agent/v1/runs/" + apply_id + "/complete", apply_report).status, 200u);

  auto versions = api(http::verb::get, "/api/v1/capsules/" + capsule + "/state-versions");
  ASSERT_EQ(versions.status, 200u);
  const auto& list = versions.obj().at("stateVersions").as_array();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].at("generation"), 1);
  EXPECT_EQ(list[0].at("createdByRunId").as_string(), apply_id);
  auto applied = api(http::verb::get, "/api/v1/runs/" + apply_id);
  EXPECT_EQ(applied.obj().at("stateVersionId"), list[0].at("id"));
  auto outputs = api(http::verb::get, "/api/v1/capsules/" + capsule + "/outputs");
  EXPECT_EQ(outputs.obj().at("generation"), 1);
  EXPECT_EQ(outputs.obj().at("outputs"), (json::object{{"url", "https://app.example"}}));

  // Next plan starts from generation 1 with the state's DEK re-sealed to this agent.
  auto plan2 = api(http::verb::post, "/api/v1/capsules/" + capsule + "/plan");
  ASSERT_EQ(plan2.status, 201u);
  auto [job2, manifest2] = claim();
  ASSERT_TRUE(manifest2.prior_state);
  EXPECT_EQ(manifest2.prior_state->generation, 1);
  auto prior = download(plan2.str("id"), json::value_to<std::string>(job2.at("leaseToken")), "prior_state");
  ASSERT_EQ(prior.status, 200u);
  EXPECT_EQ(open(prior.body, manifest2.prior_state->sealed_dek, "state"), state_text);

  // The control plane stored only ciphertext.
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_.path() / "data")) {
    if (!entry.is_regular_file()) continue;
    auto content = read_file(entry.path(), 64 << 20);
    ASSERT_TRUE(content);
    EXPECT_EQ(content->find(kSecretMarker), std::string::npos) << entry.path();
  }
}

}  // namespace
}  // namespace takosumi::controlplane

namespace takosumi::controlplane {
namespace {

// A report too large for the JSON body of /complete is streamed as the body of PUT .../report
// (docs/protocol.md "Complete"), checked against the lease before it is read.
TEST_F(HttpApiTest, AReportStreamedAsAFileCompletesTheRunAndAnOversizedOneIs413) {
  register_agent();
  const auto capsule = create_capsule();
  auto plan = api(http::verb::post, "/api/v1/capsules/" + capsule + "/plan");
  ASSERT_EQ(plan.status, 201u) << plan.body;
  const AgentJob job = claim_job();
  ASSERT_EQ(job.run_id, plan.str("id"));
  const auto put_report = [&](const std::string& lease, const std::string& body) {
    return send(http::verb::put, "/agent/v1/runs/" + job.run_id + "/report", body,
                {{"authorization", "Bearer " + agent_token_}, {"x-takosumi-lease", lease},
                 {"content-type", "application/json"}});
  };

  auto refused = put_report(job.lease, std::string(protocol::kMaxRunReportBytes + 1, ' '));
  EXPECT_EQ(refused.status, 413u) << refused.body;
  EXPECT_EQ(refused.obj().at("error").at("code"), "payload_too_large");

  const std::string text = "saved plan of " + job.run_id;
  auto up = upload(job.run_id, job.lease, "plan", envelope(job.manifest, "plan", text, 0));
  ASSERT_EQ(up.status, 200u) << up.body;
  json::array changes;
  for (int i = 0; i < 3; ++i)
    changes.push_back(json::object{{"address", "local_file.f" + std::to_string(i)},
                                   {"type", "local_file"}, {"actions", json::array{"create"}},
                                   {"delete", false}, {"replace", false}});
  const std::string report = json::serialize(json::object{
      {"leaseToken", job.lease}, {"attempt", job.manifest.attempt}, {"status", "succeeded"},
      {"hasChanges", true},
      {"changeSummary", json::object{{"add", 3}, {"change", 0}, {"destroy", 0}, {"replace", 0}}},
      {"resourceChanges", changes}, {"planDigest", crypto::sha256_hex(text)},
      {"planArtifactSha256", up.str("sha256")}});

  // Another lease is refused before the report is read.
  auto foreign = put_report("another-lease", report);
  EXPECT_EQ(foreign.status, 409u) << foreign.body;
  EXPECT_EQ(foreign.obj().at("error").at("code"), "lease_lost");

  auto done = put_report(job.lease, report);
  ASSERT_EQ(done.status, 200u) << done.body;
  // A repeat after a lost answer is acknowledged again.
  auto again = put_report(job.lease, report);
  EXPECT_EQ(again.status, 200u) << again.body;
  // ... without parsing it again: the completed attempt's lease is all it takes.
  auto unread = put_report(job.lease, "not read");
  EXPECT_EQ(unread.status, 200u) << unread.body;
  auto run = api(http::verb::get, "/api/v1/runs/" + job.run_id);
  EXPECT_EQ(run.str("status"), "succeeded") << run.body;
  EXPECT_EQ(run.obj().at("resourceChanges").as_array().size(), 3u) << run.body;
  // A list of Runs leaves each Run's changes out (they run to megabytes); the summary stays.
  auto list = api(http::verb::get, "/api/v1/capsules/" + capsule + "/runs");
  ASSERT_EQ(list.status, 200u) << list.body;
  const auto& listed = list.obj().at("runs").as_array().at(0).as_object();
  EXPECT_EQ(listed.at("id").as_string(), job.run_id);
  EXPECT_FALSE(listed.contains("resourceChanges")) << list.body;
  EXPECT_EQ(listed.at("changeSummary").at("add").as_int64(), 3) << list.body;
}

}  // namespace
}  // namespace takosumi::controlplane
