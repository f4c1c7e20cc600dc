// The real control plane on 127.0.0.1:0 in a thread, driven over loopback by a tiny Beast client:
// auth and error shapes, limits, and a whole plan → apply → plan cycle the way an agent does it,
// with real envelopes and manifest verification.
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "common/encoding.hpp"
#include "common/file_io.hpp"
#include "controlplane/control_plane.hpp"
#include "controlplane/test_support.hpp"
#include "crypto/envelope.hpp"
#include "crypto/manifest_signer.hpp"
#include "crypto/sealed_box.hpp"
#include "crypto/sha256.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::controlplane {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using takosumi::testing::TempDir;

constexpr const char* kApiToken = "api-token-for-tests";
constexpr const char* kPoolToken = "pool-token-for-tests";
constexpr const char* kSecretMarker = "PLAINTEXT-SECRET-4242";

struct Reply {
  unsigned status = 0;
  std::string body;
  json::value json;
  const json::object& obj() const { return json.as_object(); }
  std::string str(std::string_view key) const { return json::value_to<std::string>(obj().at(key)); }
};

using Headers = std::vector<std::pair<std::string, std::string>>;

Reply read_reply(asio::ip::tcp::socket& socket, beast::flat_buffer& buffer) {
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  http::read(socket, buffer, parser);
  Reply r{parser.get().result_int(), parser.get().body(), nullptr};
  boost::system::error_code ec;
  r.json = json::parse(r.body, ec);
  return r;
}

http::request<http::string_body> make_request(http::verb verb, const std::string& target,
                                              std::string body, const Headers& headers) {
  http::request<http::string_body> req{verb, target, 11};
  req.set(http::field::host, "127.0.0.1");
  for (const auto& [k, v] : headers) req.set(k, v);
  req.body() = std::move(body);
  req.prepare_payload();
  return req;
}

class HttpApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ControlConfig cfg;
    cfg.data_dir = dir_.path() / "data";
    cfg.api_token = SecretBytes::from_string(kApiToken);
    cfg.pool_tokens.push_back(SecretBytes::from_string(kPoolToken));
    auto cp = ControlPlane::create(std::move(cfg), clock_);
    ASSERT_TRUE(cp) << cp.error().to_string();
    control_ = std::move(*cp);
    auto port = control_->listen();
    ASSERT_TRUE(port) << port.error().to_string();
    port_ = *port;
    server_ = std::thread([this] { control_->run(); });
  }

  void TearDown() override {
    if (control_) control_->stop();
    if (server_.joinable()) server_.join();
  }

  Reply send(http::verb verb, const std::string& target, std::string body = {},
             Headers headers = {{"authorization", std::string("Bearer ") + kApiToken}}) {
    asio::io_context io;
    asio::ip::tcp::socket socket(io);
    socket.connect({asio::ip::make_address("127.0.0.1"), port_});
    http::write(socket, make_request(verb, target, std::move(body), headers));
    beast::flat_buffer buffer;
    return read_reply(socket, buffer);
  }
  Reply api(http::verb verb, const std::string& target, const json::value& body = json::object{}) {
    return send(verb, target, json::serialize(body));
  }
  Reply agent(http::verb verb, const std::string& target, const json::value& body) {
    return send(verb, target, json::serialize(body), {{"authorization", "Bearer " + agent_token_}});
  }

  void register_agent() {
    auto r = send(http::verb::post, "/agent/v1/register",
                  json::serialize(json::object{{"poolToken", kPoolToken}, {"name", "worker-1"},
                                               {"version", "0.1.0"}, {"labels", json::array{"linux"}},
                                               {"capacity", 2},
                                               {"boxPublicKey", box_.public_key.to_base64()},
                                               {"signPublicKey", sign_.public_key.to_base64()}}),
                  {});
    ASSERT_EQ(r.status, 200u) << r.body;
    agent_id_ = r.str("agentId");
    agent_token_ = r.str("agentToken");
  }

  std::string create_capsule() {
    auto ws = api(http::verb::post, "/api/v1/workspaces", json::object{{"name", "demo"}});
    EXPECT_EQ(ws.status, 201u) << ws.body;
    json::object body{
        {"name", "app"},
        {"source", json::object{{"gitUrl", "file:///unused"}, {"ref", std::string(40, 'c')}, {"modulePath", "infra"}}},
        {"outputAllowlist", json::object{{"url", json::object{{"from", "app_url"}, {"type", "string"}}}}}};
    auto cap = api(http::verb::post, "/api/v1/workspaces/" + ws.str("id") + "/capsules", body);
    EXPECT_EQ(cap.status, 201u) << cap.body;
    return cap.str("id");
  }

  // Claims one job and verifies its manifest as the agent would.
  std::pair<json::object, protocol::JobManifest> claim(int wait_seconds = 0) {
    auto r = agent(http::verb::post, "/agent/v1/claim",
                   json::object{{"freeSlots", 1}, {"waitSeconds", wait_seconds}});
    EXPECT_EQ(r.status, 200u) << r.body;
    const auto& jobs = r.obj().at("jobs").as_array();
    EXPECT_EQ(jobs.size(), 1u) << r.body;
    if (jobs.empty()) return {};
    const auto& job = jobs[0].as_object();
    const auto& m = job.at("manifest").as_object();
    auto pinned = crypto::load_sign_public_key(dir_.path() / "data/keys/signing.pub");
    EXPECT_TRUE(pinned) << pinned.error().to_string();
    crypto::ManifestVerifier verifier(*pinned, agent_id_, clock_);
    auto manifest = verifier.verify({json::value_to<std::string>(m.at("payload")),
                                     json::value_to<std::string>(m.at("signature"))});
    EXPECT_TRUE(manifest) << manifest.error().to_string();
    return {job, manifest ? *manifest : protocol::JobManifest{}};
  }

  // Encrypts content into an envelope sealed to the control plane, as the agent does.
  std::string envelope(const protocol::JobManifest& m, const std::string& kind,
                       const std::string& content, std::int64_t generation) {
    const auto plain = dir_.path() / ("plain-" + kind);
    const auto out = dir_.path() / ("env-" + kind);
    std::ofstream(plain) << content;
    auto control_key = crypto::BoxPublicKey::from_base64(m.control_public_key);
    EXPECT_TRUE(control_key);
    crypto::EnvelopeHeader h{kind, m.capsule_id, m.run_id, generation, "lineage-1", 1, "", m.control_key_id};
    EXPECT_TRUE(crypto::encrypt_file(plain, out, h, *control_key));
    std::filesystem::remove(plain);
    return *read_file(out, 1 << 20);
  }

  Reply upload(const std::string& run_id, const std::string& lease, const std::string& kind,
               const std::string& bytes, std::string sha = {}) {
    if (sha.empty()) sha = crypto::sha256_hex(bytes);
    return send(http::verb::put, "/agent/v1/runs/" + run_id + "/artifacts/" + kind, bytes,
                {{"authorization", "Bearer " + agent_token_}, {"x-takosumi-lease", lease},
                 {"x-takosumi-sha256", sha}, {"content-type", "application/octet-stream"}});
  }

  Reply download(const std::string& run_id, const std::string& lease, const std::string& kind) {
    return send(http::verb::get, "/agent/v1/runs/" + run_id + "/artifacts/" + kind, {},
                {{"authorization", "Bearer " + agent_token_}, {"x-takosumi-lease", lease}});
  }

  // Decrypts an envelope with a DEK sealed to our agent key.
  std::string open(const std::string& bytes, const std::string& sealed_dek_b64, const std::string& kind) {
    const auto in = dir_.path() / "in.env";
    const auto out = dir_.path() / "out.plain";
    EXPECT_TRUE(write_file_atomic(in, bytes));
    auto sealed = base64_decode(sealed_dek_b64);
    auto dek = crypto::open_sealed(*sealed, box_);
    EXPECT_TRUE(dek) << dek.error().to_string();
    crypto::EnvelopeExpectation expect;
    expect.kind = kind;
    auto header = crypto::decrypt_file(in, out, *dek, expect);
    EXPECT_TRUE(header) << header.error().to_string();
    return header ? *read_file(out, 1 << 20) : "";
  }

  TempDir dir_;
  SystemClock clock_;
  std::unique_ptr<ControlPlane> control_;
  std::thread server_;
  std::uint16_t port_ = 0;
  crypto::BoxKeyPair box_ = crypto::BoxKeyPair::generate();
  crypto::SignKeyPair sign_ = crypto::SignKeyPair::generate();
  std::string agent_id_;
  std::string agent_token_;
};

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

TEST_F(HttpApiTest, KeepsConnectionsAlive) {
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  socket.connect({asio::ip::make_address("127.0.0.1"), port_});
  beast::flat_buffer buffer;
  for (int i = 0; i < 3; ++i) {
    http::write(socket, make_request(http::verb::get, "/healthz", {}, {}));
    EXPECT_EQ(read_reply(socket, buffer).status, 200u);
  }
}

TEST_F(HttpApiTest, RegisterRefusesAnUnknownPoolToken) {
  auto r = send(http::verb::post, "/agent/v1/register",
                json::serialize(json::object{{"poolToken", "guess"}, {"name", "w"},
                                             {"boxPublicKey", box_.public_key.to_base64()},
                                             {"signPublicKey", sign_.public_key.to_base64()}}),
                {});
  EXPECT_EQ(r.status, 401u);
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
