// A Capsule's OpenTofu version constraint over the real HTTP API: stated at creation or replaced
// with PUT, shown in the Capsule JSON, audited, handed to the claiming agent inside the signed
// manifest and kept by a backup; and the OpenTofu build a Run's report names, shown on the Run.
#include "controlplane/store/catalog_store.hpp"
#include "controlplane/testing/http_api_fixture.hpp"

namespace takosumi::controlplane {
namespace {

class CapsuleOpentofuVersionApiTest : public HttpApiTest {
 protected:
  void SetUp() override {
    HttpApiTest::SetUp();
    register_agent();
    workspace_ = create_workspace();
  }

  // A Capsule whose ref is a commit, so planning needs no repository; no "opentofuVersion" when
  // `version` is absent.
  Reply post_capsule(const std::string& name, std::optional<json::value> version = std::nullopt) {
    json::object body{{"name", name},
                      {"source", json::object{{"gitUrl", "file:///unused"},
                                              {"ref", std::string(40, 'c')}}}};
    if (version) body["opentofuVersion"] = *version;
    return api(http::verb::post, "/api/v1/workspaces/" + workspace_ + "/capsules", body);
  }
  Reply put_version(const std::string& capsule, const json::value& body) {
    return api(http::verb::put, "/api/v1/capsules/" + capsule + "/opentofu-version", body);
  }
  json::value version_of(const std::string& capsule) {
    auto r = api(http::verb::get, "/api/v1/capsules/" + capsule);
    EXPECT_EQ(r.status, 200u) << r.body;
    return r.status == 200u ? r.obj().at("opentofuVersion") : json::value("unreadable");
  }
  void expect_refused(const Reply& r, const std::string& fragment) {
    EXPECT_EQ(r.status, 400u) << r.body;
    EXPECT_EQ(error_code(r), "invalid_argument") << r.body;
    EXPECT_NE(r.body.find(fragment), std::string::npos) << r.body;
  }
  // Claims the next Run and reports it succeeded without changes, naming `build` when not empty.
  std::string complete_without_changes(const std::string& build) {
    AgentJob job = claim_job();
    json::object report{{"leaseToken", job.lease}, {"attempt", job.manifest.attempt},
                        {"status", "succeeded"}, {"hasChanges", false},
                        {"tofuVersion", "1.99.0"}};
    if (!build.empty()) report["tofuBuild"] = build;
    auto done = agent(http::verb::post, "/agent/v1/runs/" + job.run_id + "/complete", report);
    EXPECT_EQ(done.status, 200u) << done.body;
    return job.run_id;
  }

  std::string workspace_;
};

TEST_F(CapsuleOpentofuVersionApiTest, CreateShowsTheConstraintAndNullWithoutOne) {
  auto pinned = post_capsule("pinned", "~> 1.10.0");
  ASSERT_EQ(pinned.status, 201u) << pinned.body;
  EXPECT_EQ(pinned.obj().at("opentofuVersion"), "~> 1.10.0");
  EXPECT_EQ(version_of(pinned.str("id")), "~> 1.10.0");

  const std::vector<std::pair<std::string, std::optional<json::value>>> nones{
      {"absent", std::nullopt}, {"null", json::value(nullptr)}, {"empty", json::value("")}};
  for (const auto& [name, none] : nones) {
    auto created = post_capsule(name, none);
    ASSERT_EQ(created.status, 201u) << created.body;
    EXPECT_TRUE(created.obj().at("opentofuVersion").is_null()) << created.body;
  }
  auto list = api(http::verb::get, "/api/v1/workspaces/" + workspace_ + "/capsules");
  EXPECT_EQ(list.obj().at("capsules").at(0).at("opentofuVersion"), "~> 1.10.0");
}

TEST_F(CapsuleOpentofuVersionApiTest, InvalidConstraintIsRefusedNamingTheField) {
  expect_refused(post_capsule("a", "latest"), "opentofuVersion: \\\"latest\\\" is not a version");
  expect_refused(post_capsule("a", "=> 1.0"), "opentofuVersion: \\\"=> 1.0\\\" is not a version");
  expect_refused(post_capsule("a", json::value(1)), "\\\"opentofuVersion\\\" must be a string");
  expect_refused(post_capsule("a", json::value(">= " + std::string(300, '1'))),
                 "\\\"opentofuVersion\\\" is longer than 256");
  auto none = api(http::verb::get, "/api/v1/workspaces/" + workspace_ + "/capsules");
  EXPECT_EQ(none.obj().at("capsules").as_array().size(), 0u);
}

TEST_F(CapsuleOpentofuVersionApiTest, PutSetsAndNullClears) {
  auto created = post_capsule("app");
  ASSERT_EQ(created.status, 201u) << created.body;
  const std::string capsule = created.str("id");

  auto set = put_version(capsule, json::object{{"opentofuVersion", ">= 1.9, < 2.0"}});
  ASSERT_EQ(set.status, 200u) << set.body;
  EXPECT_EQ(set.str("id"), capsule) << "the answer is the Capsule";
  EXPECT_EQ(set.obj().at("opentofuVersion"), ">= 1.9, < 2.0");
  EXPECT_EQ(version_of(capsule), ">= 1.9, < 2.0");

  expect_refused(put_version(capsule, json::object{{"opentofuVersion", "latest"}}),
                 "opentofuVersion: ");
  expect_refused(put_version(capsule, json::object{}), "\\\"opentofuVersion\\\" is required");
  expect_refused(put_version(capsule, json::object{{"opentofuVersion", nullptr}, {"pin", true}}),
                 "unknown field \\\"pin\\\"");
  expect_refused(put_version(capsule, json::array{}), "object");
  EXPECT_EQ(version_of(capsule), ">= 1.9, < 2.0") << "a refused PUT changes nothing";
  EXPECT_EQ(put_version("cap_missing", json::object{{"opentofuVersion", nullptr}}).status, 404u);

  auto cleared = put_version(capsule, json::object{{"opentofuVersion", nullptr}});
  ASSERT_EQ(cleared.status, 200u) << cleared.body;
  EXPECT_TRUE(cleared.obj().at("opentofuVersion").is_null());
  EXPECT_TRUE(version_of(capsule).is_null());

  auto r = api(http::verb::get, "/api/v1/workspaces/" + workspace_ + "/activity");
  ASSERT_EQ(r.status, 200u) << r.body;
  const auto& events = r.obj().at("events").as_array();
  ASSERT_EQ(events.size(), 4u) << "refused PUTs are not recorded: " << r.body;
  EXPECT_EQ(events[0].at("action"), "capsule.opentofu_version_set");
  EXPECT_EQ(events[0].at("capsuleId"), capsule.c_str());
  EXPECT_EQ(events[0].at("detail"), (json::object{{"opentofuVersion", nullptr}}));
  EXPECT_EQ(events[1].at("detail"), (json::object{{"opentofuVersion", ">= 1.9, < 2.0"}}));
  EXPECT_EQ(events[2].at("action"), "capsule.created");
  EXPECT_TRUE(events[2].at("detail").at("opentofuVersion").is_null()) << r.body;
}

TEST_F(CapsuleOpentofuVersionApiTest, ManifestCarriesTheConstraintInForceAtClaim) {
  auto created = post_capsule("app", "~> 1.9.0");
  ASSERT_EQ(created.status, 201u) << created.body;
  const std::string capsule = created.str("id");
  ASSERT_EQ(api(http::verb::post, "/api/v1/capsules/" + capsule + "/plan").status, 201u);
  // Replaced while the Run is queued: the manifest is built when the Run is claimed.
  ASSERT_EQ(put_version(capsule, json::object{{"opentofuVersion", "~> 1.10.0"}}).status, 200u);
  auto [job, manifest] = claim();
  EXPECT_EQ(manifest.capsule_id, capsule);
  EXPECT_EQ(manifest.opentofu_version, "~> 1.10.0");

  auto plain = post_capsule("plain");
  ASSERT_EQ(plain.status, 201u) << plain.body;
  ASSERT_EQ(api(http::verb::post, "/api/v1/capsules/" + plain.str("id") + "/plan").status, 201u);
  auto [plain_job, plain_manifest] = claim();
  EXPECT_EQ(plain_manifest.capsule_id, plain.str("id"));
  EXPECT_EQ(plain_manifest.opentofu_version, "");
}

TEST_F(CapsuleOpentofuVersionApiTest, RunShowsTheBuildItsReportNamed) {
  auto created = post_capsule("app");
  ASSERT_EQ(created.status, 201u) << created.body;
  const std::string capsule = created.str("id");
  ASSERT_EQ(api(http::verb::post, "/api/v1/capsules/" + capsule + "/plan").status, 201u);
  const std::string with_build = complete_without_changes("1.99.0");
  ASSERT_EQ(api(http::verb::post, "/api/v1/capsules/" + capsule + "/plan").status, 201u);
  const std::string without = complete_without_changes("");

  auto run = api(http::verb::get, "/api/v1/runs/" + with_build);
  ASSERT_EQ(run.status, 200u) << run.body;
  EXPECT_EQ(run.obj().at("tofuVersion"), "1.99.0");
  EXPECT_EQ(run.obj().at("tofuBuild"), "1.99.0");
  auto plain = api(http::verb::get, "/api/v1/runs/" + without);
  ASSERT_EQ(plain.status, 200u) << plain.body;
  EXPECT_EQ(plain.obj().at("tofuVersion"), "1.99.0");
  EXPECT_TRUE(plain.obj().at("tofuBuild").is_null()) << plain.body;
}

TEST_F(CapsuleOpentofuVersionApiTest, BackupKeepsTheConstraint) {
  auto pinned = post_capsule("pinned", ">= 1.9, < 2.0");
  auto plain = post_capsule("plain");
  ASSERT_EQ(pinned.status, 201u) << pinned.body;
  ASSERT_EQ(plain.status, 201u) << plain.body;
  auto backup = api(http::verb::post, "/api/v1/workspaces/" + workspace_ + "/backups");
  ASSERT_EQ(backup.status, 201u) << backup.body;
  auto document = api(http::verb::get, "/api/v1/backups/" + backup.str("id"));
  ASSERT_EQ(document.status, 200u) << document.body;

  // Restored into another control plane, as `takosumi-control restore` does.
  auto target = ControlPlane::create(test_config(dir_.path() / "target"), clock_);
  ASSERT_TRUE(target) << target.error().to_string();
  auto restored = (*target)->restore_workspace(document.body, control_signing_key().to_base64());
  ASSERT_TRUE(restored) << restored.error().to_string();
  auto db = open_store(test_config(dir_.path() / "target"));
  ASSERT_TRUE(db) << db.error().to_string();
  CatalogStore catalog(*db, clock_);
  auto pinned_there = catalog.get_capsule(pinned.str("id"));
  auto plain_there = catalog.get_capsule(plain.str("id"));
  ASSERT_TRUE(pinned_there) << pinned_there.error().to_string();
  ASSERT_TRUE(plain_there) << plain_there.error().to_string();
  EXPECT_EQ(pinned_there->opentofu_version, ">= 1.9, < 2.0");
  EXPECT_FALSE(plain_there->opentofu_version);
}

}  // namespace
}  // namespace takosumi::controlplane
