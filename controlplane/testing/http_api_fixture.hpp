#pragma once
// Test-only: the real control plane on 127.0.0.1:0 in a thread, a tiny blocking client, and
// an agent played by the test (signed registration, claim with manifest verification, envelopes sealed to
// the control plane, uploads, run reports). Shared by the HTTP API tests. Beast and Asio stay in
// http_api_fixture.cpp (and http_wire.hpp, for the few tests that speak HTTP by hand): this header
// is in every HTTP API test's translation unit.
#include <boost/beast/http/verb.hpp>
#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "common/encoding.hpp"
#include "common/file_io.hpp"
#include "controlplane/control_plane.hpp"
#include "controlplane/testing/test_support.hpp"
#include "crypto/envelope.hpp"
#include "protocol/signed_manifest.hpp"
#include "crypto/registration_proof.hpp"
#include "crypto/sealed_box.hpp"
#include "crypto/sha256.hpp"
#include "tests/support/fake_clock.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::controlplane {

namespace http = boost::beast::http;
namespace json = boost::json;
using takosumi::testing::TempDir;

inline constexpr const char* kApiToken = "api-token-for-tests";
inline constexpr const char* kPoolToken = "pool-token-for-tests";
inline constexpr const char* kSecretMarker = "PLAINTEXT-SECRET-4242";

struct Reply {
  unsigned status = 0;
  std::string body;
  json::value json;
  std::string allow;  // the Allow header
  const json::object& obj() const { return json.as_object(); }
  std::string str(std::string_view key) const { return json::value_to<std::string>(obj().at(key)); }
};

using Headers = std::vector<std::pair<std::string, std::string>>;

class HttpApiTest : public ::testing::Test {
 protected:
  // The tests' configuration of a control plane keeping its data in data_dir.
  static ControlConfig test_config(const std::filesystem::path& data_dir) {
    ControlConfig cfg;
    cfg.data_dir = data_dir;
    cfg.api_token = SecretBytes::from_string(kApiToken);
    cfg.pool_tokens.push_back(SecretBytes::from_string(kPoolToken));
    cfg.metrics.listen = "127.0.0.1:0";  // tests run side by side: never the default port
    // The API tests name local repositories anywhere (file:///unused, temp directories); the
    // source rules themselves are tested with roots of their own (git_ref_resolver_test,
    // source_rules_api_test). dataDir stays out of reach.
    cfg.sources.file_roots = {"/"};
    cfg.git_helper = test_paths::githelper;
    return cfg;
  }

  void SetUp() override {
    ControlConfig cfg = test_config(dir_.path() / "data");
    if (testing::testing_on_postgres()) {  // the pg.* run of this suite (takosumi_on_postgres)
      cfg.store_driver = StoreDriver::postgres;
      cfg.postgres.url = testing::new_test_postgres_database();
    }
    configure(cfg);
    store_config_.data_dir = cfg.data_dir;
    store_config_.store_driver = cfg.store_driver;
    store_config_.postgres = cfg.postgres;
    auto cp = ControlPlane::create(std::move(cfg), clock_);
    ASSERT_TRUE(cp) << cp.error().to_string();
    control_ = std::move(*cp);
    auto port = control_->listen();
    ASSERT_TRUE(port) << port.error().to_string();
    port_ = *port;
    server_ = std::thread([this] { control_->run(); });
  }

  // Lets a test fixture change the configuration (limits) before the control plane starts.
  virtual void configure(ControlConfig&) {}

  // Another connection to the control plane's store, for what a test reads straight from it.
  Database open_store_db() {
    auto db = open_store(store_config_);
    if (!db) throw std::runtime_error(db.error().to_string());
    return std::move(*db);
  }

  void TearDown() override {
    if (control_) control_->stop();
    if (server_.joinable()) server_.join();
  }

  // One request on a connection of its own (http_api_fixture.cpp).
  Reply send(http::verb verb, const std::string& target, std::string body = {},
             Headers headers = {{"authorization", std::string("Bearer ") + kApiToken}});
  Reply api(http::verb verb, const std::string& target, const json::value& body = json::object{}) {
    return send(verb, target, json::serialize(body));
  }
  Reply agent(http::verb verb, const std::string& target, const json::value& body) {
    return send(verb, target, json::serialize(body), {{"authorization", "Bearer " + agent_token_}});
  }

  // The control plane's signing key, as an agent pins it.
  crypto::SignPublicKey control_signing_key() {
    auto pinned = crypto::load_sign_public_key(dir_.path() / "data/keys/signing.pub");
    EXPECT_TRUE(pinned) << pinned.error().to_string();
    return pinned ? *pinned : crypto::SignPublicKey{};
  }

  std::string fetch_challenge(const std::string& pool_token = kPoolToken) {
    auto r = send(http::verb::post, "/agent/v1/register/challenge", "{}",
                  {{"authorization", "Bearer " + pool_token}});
    EXPECT_EQ(r.status, 200u) << r.body;
    return r.status == 200u ? r.str("challenge") : "";
  }

  // A registration body for name and keys, signed by signer over claim (which the caller may
  // alter to build a forgery).
  static json::object registration_body(const crypto::RegistrationClaim& claim,
                                        const crypto::SignKeyPair& signer) {
    return {{"name", claim.name}, {"version", "0.1.0"},
            {"labels", json::array{"linux"}}, {"capacity", 2},
            {"boxPublicKey", claim.box_public_key.to_base64()},
            {"signPublicKey", claim.sign_public_key.to_base64()},
            {"challenge", claim.challenge},
            {"signature", crypto::sign_registration(claim, signer)}};
  }

  // What an honest agent signs: a fresh challenge, its name, its keys, the pool token, the
  // control plane's key.
  crypto::RegistrationClaim honest_claim(const std::string& name, const crypto::SignKeyPair& sign,
                                         const crypto::BoxKeyPair& box) {
    return {fetch_challenge(), name, sign.public_key, box.public_key,
            crypto::sha256_hex(kPoolToken), control_signing_key()};
  }

  Reply send_registration(const json::object& body) {
    return send(http::verb::post, "/agent/v1/register", json::serialize(body),
                {{"authorization", std::string("Bearer ") + kPoolToken}});
  }

  void register_agent() {
    auto r = send_registration(registration_body(honest_claim("worker-1", sign_, box_), sign_));
    ASSERT_EQ(r.status, 200u) << r.body;
    agent_id_ = r.str("agentId");
    agent_token_ = r.str("agentToken");
  }

  std::string create_workspace(const std::string& name = "demo") {
    auto ws = api(http::verb::post, "/api/v1/workspaces", json::object{{"name", name}});
    EXPECT_EQ(ws.status, 201u) << ws.body;
    return ws.status == 201u ? ws.str("id") : "";
  }

  // A Capsule whose ref is a 40-hex commit by default, so planning needs no repository.
  std::string create_capsule(const std::string& workspace_id, const std::string& name,
                             const std::string& git_url = "file:///unused",
                             const std::string& ref = std::string(40, 'c')) {
    json::object body{
        {"name", name},
        {"source", json::object{{"gitUrl", git_url}, {"ref", ref}, {"modulePath", "infra"}}},
        {"outputAllowlist", json::object{{"url", json::object{{"from", "app_url"}, {"type", "string"}}}}}};
    auto cap = api(http::verb::post, "/api/v1/workspaces/" + workspace_id + "/capsules", body);
    EXPECT_EQ(cap.status, 201u) << cap.body;
    return cap.status == 201u ? cap.str("id") : "";
  }
  std::string create_capsule() { return create_capsule(create_workspace(), "app"); }

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
    protocol::ManifestVerifier verifier(*pinned, agent_id_, clock_);
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

  // One claimed job as the test's agent sees it.
  struct AgentJob {
    std::string run_id;
    std::string lease;
    protocol::JobManifest manifest;
  };
  AgentJob claim_job() {
    auto [job, manifest] = claim();
    if (job.empty()) return {};
    return {manifest.run_id, json::value_to<std::string>(job.at("leaseToken")), manifest};
  }

  // Plays the agent for a plan or destroy_plan with changes: uploads the encrypted saved plan and
  // reports it with the given data-loss marks.
  void complete_plan(const AgentJob& job, const json::array& data_loss = {}) {
    const std::string text = "saved plan of " + job.run_id;
    auto up = upload(job.run_id, job.lease, "plan", envelope(job.manifest, "plan", text, 0));
    ASSERT_EQ(up.status, 200u) << up.body;
    json::object report{{"leaseToken", job.lease}, {"attempt", job.manifest.attempt},
                        {"status", "succeeded"}, {"hasChanges", true},
                        {"changeSummary", json::object{{"add", 1}, {"change", 0}, {"destroy", 0}, {"replace", 0}}},
                        {"planDigest", crypto::sha256_hex(text)},
                        {"planArtifactSha256", up.str("sha256")},
                        {"dataLoss", data_loss}};
    auto done = agent(http::verb::post, "/agent/v1/runs/" + job.run_id + "/complete", report);
    ASSERT_EQ(done.status, 200u) << done.body;
  }

  // Plays the agent for an apply: uploads the new state and reports it on top of the manifest's
  // prior generation, with the public output url = state_text.
  void complete_apply(const AgentJob& job, const std::string& state_text) {
    ASSERT_TRUE(job.manifest.saved_plan) << "not an apply manifest: " << job.run_id;
    const std::int64_t prior = job.manifest.prior_state ? job.manifest.prior_state->generation : 0;
    auto up = upload(job.run_id, job.lease, "state", envelope(job.manifest, "state", state_text, prior + 1));
    ASSERT_EQ(up.status, 200u) << up.body;
    json::object report{{"leaseToken", job.lease}, {"attempt", job.manifest.attempt},
                        {"status", "succeeded"},
                        {"newState", json::object{{"artifactSha256", up.str("sha256")},
                                                  {"plaintextSha256", crypto::sha256_hex(state_text)},
                                                  {"serial", prior + 1}, {"lineage", "lineage-1"},
                                                  {"priorGeneration", prior}}},
                        {"outputs", json::object{{"url", state_text}}}};
    auto done = agent(http::verb::post, "/agent/v1/runs/" + job.run_id + "/complete", report);
    ASSERT_EQ(done.status, 200u) << done.body;
  }

  Reply apply_run(const std::string& plan_run_id, json::object body = {}) {
    return api(http::verb::post, "/api/v1/runs/" + plan_run_id + "/apply", body);
  }

  // A plan Run (already created) played through plan and apply; returns the apply Run's JSON.
  Reply play_plan_and_apply(const std::string& plan_run_id, const std::string& state_text,
                            const json::array& data_loss = {}) {
    AgentJob plan = claim_job();
    EXPECT_EQ(plan.run_id, plan_run_id);
    complete_plan(plan, data_loss);
    auto apply = apply_run(plan_run_id, {{"acceptDataLoss", !data_loss.empty()}});
    EXPECT_EQ(apply.status, 201u) << apply.body;
    complete_apply(claim_job(), state_text);
    return api(http::verb::get, "/api/v1/runs/" + apply.str("id"));
  }
  Reply plan_and_apply(const std::string& capsule_id, const std::string& state_text) {
    auto plan = api(http::verb::post, "/api/v1/capsules/" + capsule_id + "/plan");
    EXPECT_EQ(plan.status, 201u) << plan.body;
    return play_plan_and_apply(plan.str("id"), state_text);
  }

  json::array state_versions(const std::string& capsule_id) {
    auto r = api(http::verb::get, "/api/v1/capsules/" + capsule_id + "/state-versions");
    EXPECT_EQ(r.status, 200u) << r.body;
    return r.status == 200u ? r.obj().at("stateVersions").as_array() : json::array{};
  }

  static std::string error_code(const Reply& r) {
    if (!r.json.is_object() || !r.obj().contains("error")) return "";
    return json::value_to<std::string>(r.obj().at("error").at("code"));
  }

  TempDir dir_;
  takosumi::testing::FakeClock clock_;
  std::unique_ptr<ControlPlane> control_;
  ControlConfig store_config_;  // the store part of the configuration served (open_store_db)
  std::thread server_;
  std::uint16_t port_ = 0;
  crypto::BoxKeyPair box_ = crypto::BoxKeyPair::generate();
  crypto::SignKeyPair sign_ = crypto::SignKeyPair::generate();
  std::string agent_id_;
  std::string agent_token_;
};

}  // namespace takosumi::controlplane
