// A Capsule's Run policy over the real HTTP API: stated at creation or replaced with PUT, shown in
// the Capsule JSON, audited, and handed to the claiming agent inside the signed manifest.
#include "controlplane/testing/http_api_fixture.hpp"

namespace takosumi::controlplane {
namespace {

const std::string kAws = "registry.opentofu.org/hashicorp/aws";
const std::string kNull = "registry.opentofu.org/hashicorp/null";

json::object default_policy() {
  return {{"deniedProviders", json::array{}}, {"allowProvisioners", false},
          {"allowExternalData", false}};
}

class CapsulePolicyApiTest : public HttpApiTest {
 protected:
  void SetUp() override {
    HttpApiTest::SetUp();
    register_agent();
    workspace_ = create_workspace();
  }

  // A Capsule whose ref is a commit, so planning needs no repository; no "policy" when null.
  Reply post_capsule(const std::string& name, json::value policy = nullptr) {
    json::object body{{"name", name},
                      {"source", json::object{{"gitUrl", "file:///unused"},
                                              {"ref", std::string(40, 'c')}}}};
    if (!policy.is_null()) body["policy"] = std::move(policy);
    return api(http::verb::post, "/api/v1/workspaces/" + workspace_ + "/capsules", body);
  }
  Reply put_policy(const std::string& capsule, const json::value& policy) {
    return api(http::verb::put, "/api/v1/capsules/" + capsule + "/policy", policy);
  }
  json::value policy_of(const std::string& capsule) {
    auto r = api(http::verb::get, "/api/v1/capsules/" + capsule);
    EXPECT_EQ(r.status, 200u) << r.body;
    return r.status == 200u ? r.obj().at("policy") : json::value();
  }
  void expect_refused(const Reply& r, const std::string& field) {
    EXPECT_EQ(r.status, 400u) << r.body;
    EXPECT_EQ(error_code(r), "invalid_argument") << r.body;
    EXPECT_NE(r.body.find(field), std::string::npos) << r.body;
  }

  std::string workspace_;
};

TEST_F(CapsulePolicyApiTest, CreateWithPolicyShowsItAndDefaultsOtherwise) {
  auto plain = post_capsule("plain");
  ASSERT_EQ(plain.status, 201u) << plain.body;
  EXPECT_EQ(plain.obj().at("policy"), default_policy()) << "nothing allowed beyond providers";

  auto strict = post_capsule("strict", json::object{{"allowedProviders", json::array{kNull, kAws, kNull}},
                                                    {"deniedProviders", json::array{kAws}},
                                                    {"allowExternalData", true},
                                                    {"network", "none"}});
  ASSERT_EQ(strict.status, 201u) << strict.body;
  const json::object expected{{"allowedProviders", json::array{kAws, kNull}},
                              {"deniedProviders", json::array{kAws}},
                              {"allowProvisioners", false},
                              {"allowExternalData", true},
                              {"network", "none"}};
  EXPECT_EQ(strict.obj().at("policy"), expected) << "sorted, without repeats";
  EXPECT_EQ(policy_of(strict.str("id")), expected);
  auto list = api(http::verb::get, "/api/v1/workspaces/" + workspace_ + "/capsules");
  EXPECT_EQ(list.obj().at("capsules").at(1).at("policy"), expected);
}

TEST_F(CapsulePolicyApiTest, InvalidPolicyIsRefusedNamingTheField) {
  expect_refused(post_capsule("a", json::object{{"allowedProviders", json::array{"hashicorp/aws"}}}),
                 "policy.allowedProviders");
  expect_refused(post_capsule("a", json::object{{"network", "host"}}), "policy.network");
  expect_refused(post_capsule("a", json::object{{"allowProvisioners", "yes"}}),
                 "policy.allowProvisioners");
  expect_refused(post_capsule("a", json::object{{"denyProviders", json::array{kAws}}}),
                 "unknown field \\\"policy.denyProviders");
  expect_refused(post_capsule("a", json::array{}), "policy\\\" must be an object");
  auto none = api(http::verb::get, "/api/v1/workspaces/" + workspace_ + "/capsules");
  EXPECT_EQ(none.obj().at("capsules").as_array().size(), 0u);

  auto created = post_capsule("a", json::object{{"deniedProviders", json::array{kAws}}});
  ASSERT_EQ(created.status, 201u) << created.body;
  const std::string capsule = created.str("id");
  expect_refused(put_policy(capsule, json::object{{"deniedProviders", json::array{"aws"}}}),
                 "policy.deniedProviders");
  expect_refused(put_policy(capsule, json::object{{"network", "host"}}), "policy.network");
  EXPECT_EQ(policy_of(capsule), created.obj().at("policy")) << "a refused PUT changes nothing";
  EXPECT_EQ(put_policy("cap_missing", json::object{}).status, 404u);
}

TEST_F(CapsulePolicyApiTest, PutReplacesTheWholePolicy) {
  auto created = post_capsule("app", json::object{{"allowProvisioners", true},
                                                  {"deniedProviders", json::array{kAws}}});
  ASSERT_EQ(created.status, 201u) << created.body;
  const std::string capsule = created.str("id");

  auto replaced = put_policy(capsule, json::object{{"network", "none"}});
  ASSERT_EQ(replaced.status, 200u) << replaced.body;
  EXPECT_EQ(replaced.str("id"), capsule) << "the answer is the Capsule";
  json::object expected = default_policy();
  expected["network"] = "none";
  EXPECT_EQ(replaced.obj().at("policy"), expected) << "fields left out return to their defaults";
  EXPECT_EQ(policy_of(capsule), expected);

  auto cleared = put_policy(capsule, json::object{});
  ASSERT_EQ(cleared.status, 200u) << cleared.body;
  EXPECT_EQ(cleared.obj().at("policy"), default_policy());
}

TEST_F(CapsulePolicyApiTest, ManifestCarriesThePolicyInForceAtClaim) {
  auto created = post_capsule("app", json::object{{"allowProvisioners", true}});
  ASSERT_EQ(created.status, 201u) << created.body;
  const std::string capsule = created.str("id");
  ASSERT_EQ(api(http::verb::post, "/api/v1/capsules/" + capsule + "/plan").status, 201u);
  // Replaced while the Run is queued: the manifest is built when the Run is claimed.
  ASSERT_EQ(put_policy(capsule, json::object{{"allowedProviders", json::array{kNull}},
                                             {"allowExternalData", true},
                                             {"network", "none"}}).status, 200u);

  auto [job, manifest] = claim();
  protocol::RunPolicy expected;
  expected.allowed_providers = std::vector<std::string>{kNull};
  expected.allow_external_data = true;
  expected.network = protocol::NetworkMode::none;
  EXPECT_EQ(manifest.policy, expected);

  auto plain = post_capsule("plain");
  ASSERT_EQ(plain.status, 201u);
  ASSERT_EQ(api(http::verb::post, "/api/v1/capsules/" + plain.str("id") + "/plan").status, 201u);
  auto [plain_job, plain_manifest] = claim();
  EXPECT_EQ(plain_manifest.capsule_id, plain.str("id"));
  EXPECT_EQ(plain_manifest.policy, protocol::RunPolicy{});
}

TEST_F(CapsulePolicyApiTest, ActivityRecordsThePolicy) {
  auto created = post_capsule("app", json::object{{"deniedProviders", json::array{kAws}}});
  ASSERT_EQ(created.status, 201u) << created.body;
  const std::string capsule = created.str("id");
  auto replaced = put_policy(capsule, json::object{{"allowProvisioners", true}});
  ASSERT_EQ(replaced.status, 200u) << replaced.body;
  ASSERT_EQ(put_policy(capsule, json::object{{"network", "bad"}}).status, 400u);

  auto r = api(http::verb::get, "/api/v1/workspaces/" + workspace_ + "/activity");
  ASSERT_EQ(r.status, 200u) << r.body;
  const auto& events = r.obj().at("events").as_array();
  ASSERT_EQ(events.size(), 3u) << "a refused PUT is not recorded: " << r.body;
  EXPECT_EQ(events[0].at("action"), "capsule.policy_set");
  EXPECT_EQ(events[0].at("capsuleId"), capsule.c_str());
  EXPECT_EQ(events[0].at("detail"), replaced.obj().at("policy"));
  EXPECT_EQ(events[1].at("action"), "capsule.created");
  EXPECT_EQ(events[1].at("detail").at("policy"), created.obj().at("policy"));
}

}  // namespace
}  // namespace takosumi::controlplane
