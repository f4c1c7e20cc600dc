// A Capsule changes over the real HTTP API (PATCH /api/v1/capsules/{id}): each change a new spec
// revision, validated as at creation and audited by name; a Run runs the revision it was made
// from (an apply its plan's), whatever the Capsule became while it waited; the revisions stay
// readable.
#include "controlplane/testing/http_api_fixture.hpp"

namespace takosumi::controlplane {
namespace {

class CapsuleChangeApiTest : public HttpApiTest {
 protected:
  void SetUp() override {
    HttpApiTest::SetUp();
    register_agent();
    workspace_ = create_workspace();
    capsule_ = create_capsule(workspace_, "app");
  }
  Reply patch(const json::value& body, const std::string& capsule = "") {
    return api(http::verb::patch, "/api/v1/capsules/" + (capsule.empty() ? capsule_ : capsule), body);
  }
  std::string plan() {
    auto r = api(http::verb::post, "/api/v1/capsules/" + capsule_ + "/plan");
    EXPECT_EQ(r.status, 201u) << r.body;
    return r.status == 201u ? r.str("id") : "";
  }
  void expect_refused(const Reply& r, unsigned status, const std::string& fragment) {
    EXPECT_EQ(r.status, status) << r.body;
    EXPECT_NE(r.body.find(fragment), std::string::npos) << r.body;
  }

  std::string workspace_, capsule_;
};

TEST_F(CapsuleChangeApiTest, AChangeIsANewRevisionAndEachRunRunsTheRevisionItWasMadeFrom) {
  auto before = api(http::verb::get, "/api/v1/capsules/" + capsule_);
  EXPECT_EQ(before.obj().at("specRevision"), 1);
  const std::string first_plan = plan();  // queued under revision 1

  auto changed = patch(json::object{
      {"source", json::object{{"ref", std::string(40, 'd')}, {"modulePath", "envs/prod"}}},
      {"variables", json::object{{"region", "eu"}, {"replicas", 3}}},
      {"outputAllowlist", json::object{{"endpoint", json::object{{"from", "endpoint"}}}}}});
  ASSERT_EQ(changed.status, 200u) << changed.body;
  EXPECT_EQ(changed.obj().at("specRevision"), 2);
  EXPECT_EQ(changed.obj().at("source").at("ref"), json::value(std::string(40, 'd')));
  EXPECT_EQ(changed.obj().at("source").at("modulePath"), "envs/prod");
  EXPECT_EQ(changed.obj().at("source").at("gitUrl"), "file:///unused") << "kept: not in the change";
  EXPECT_EQ(changed.obj().at("name"), "app");

  // The Run queued before the change runs revision 1: its module path, variables and Outputs.
  AgentJob job = claim_job();
  ASSERT_EQ(job.run_id, first_plan);
  EXPECT_EQ(job.manifest.source.module_path, "infra");
  EXPECT_TRUE(job.manifest.variables.empty());
  EXPECT_TRUE(job.manifest.output_allowlist.contains("url"));
  EXPECT_EQ(job.manifest.source.commit, std::string(40, 'c'));
  auto first = api(http::verb::get, "/api/v1/runs/" + first_plan);
  EXPECT_EQ(first.obj().at("specRevision"), 1);
  // Its apply too, though the Capsule is at revision 2 by then.
  complete_plan(job);
  auto apply = apply_run(first_plan);
  ASSERT_EQ(apply.status, 201u) << apply.body;
  EXPECT_EQ(apply.obj().at("specRevision"), 1);
  AgentJob apply_job = claim_job();
  EXPECT_EQ(apply_job.manifest.source.module_path, "infra");
  EXPECT_TRUE(apply_job.manifest.output_allowlist.contains("url"));
  complete_apply(apply_job, "state-1");

  // A plan made now runs revision 2, from the new ref.
  const std::string second_plan = plan();
  AgentJob next = claim_job();
  ASSERT_EQ(next.run_id, second_plan);
  EXPECT_EQ(next.manifest.source.module_path, "envs/prod");
  EXPECT_EQ(next.manifest.source.commit, std::string(40, 'd'));
  EXPECT_EQ(next.manifest.variables.at("region"), "eu");
  EXPECT_EQ(next.manifest.variables.at("replicas"), 3);
  EXPECT_TRUE(next.manifest.output_allowlist.contains("endpoint"));
  EXPECT_FALSE(next.manifest.output_allowlist.contains("url"));
  EXPECT_EQ(api(http::verb::get, "/api/v1/runs/" + second_plan).obj().at("specRevision"), 2);
  complete_plan(next);
  // A drift check of the StateVersion revision 1's apply made checks what made it: revision 1's module and commit.
  auto drift = api(http::verb::post, "/api/v1/capsules/" + capsule_ + "/drift-check");
  ASSERT_EQ(drift.status, 201u) << drift.body;
  EXPECT_EQ(drift.obj().at("specRevision"), 1);
  AgentJob drift_job = claim_job();
  EXPECT_EQ(drift_job.manifest.source.module_path, "infra");
  EXPECT_EQ(drift_job.manifest.source.commit, std::string(40, 'c'));

  // Both revisions stay readable, and the StateVersions of revision 1 are the Capsule's still.
  auto revisions = api(http::verb::get, "/api/v1/capsules/" + capsule_ + "/revisions");
  ASSERT_EQ(revisions.status, 200u) << revisions.body;
  const auto& list = revisions.obj().at("revisions").as_array();
  ASSERT_EQ(list.size(), 2u) << revisions.body;
  EXPECT_EQ(list[0].at("revision"), 1);
  EXPECT_EQ(list[0].at("source").at("modulePath"), "infra");
  EXPECT_EQ(list[1].at("revision"), 2);
  EXPECT_EQ(list[1].at("variables").at("region"), "eu");
  auto versions = api(http::verb::get, "/api/v1/capsules/" + capsule_ + "/state-versions");
  ASSERT_EQ(versions.status, 200u) << versions.body;
  EXPECT_EQ(versions.obj().at("stateVersions").as_array().size(), 1u) << versions.body;

  // The audit names what changed, never a value.
  auto activity = api(http::verb::get, "/api/v1/workspaces/" + workspace_ + "/activity");
  const json::object* updated = nullptr;
  for (const auto& e : activity.obj().at("events").as_array())
    if (e.at("action") == "capsule.updated") updated = &e.as_object();
  ASSERT_NE(updated, nullptr) << activity.body;
  const auto detail = json::serialize(updated->at("detail"));
  for (const char* named : {"source.ref", "source.modulePath", "variables", "outputAllowlist",
                            "\"region\"", "\"replicas\"", "\"specRevision\":2"})
    EXPECT_NE(detail.find(named), std::string::npos) << named << " in " << detail;
  EXPECT_EQ(detail.find("\"eu\""), std::string::npos) << detail;
}

TEST_F(CapsuleChangeApiTest, AChangeIsValidatedAsAtCreationAndNamesWhatElseChangesElsewhere) {
  expect_refused(patch(json::object{}), 400, "nothing to change");
  expect_refused(patch(json::object{{"name", "Not Valid"}}), 400, "name");
  expect_refused(patch(json::object{{"source", json::object{{"modulePath", "../elsewhere"}}}}), 400,
                 "source.modulePath");
  expect_refused(patch(json::object{{"source", json::object{{"ref", "-x"}}}}), 400, "source.ref");
  expect_refused(patch(json::object{{"source", json::object{{"gitUrl", "ftp://example.com/x.git"}}}}),
                 400, "ftp");
  expect_refused(patch(json::object{{"outputAllowlist", json::object{{"bad-name", json::object{}}}}}),
                 400, "outputAllowlist");
  expect_refused(patch(json::object{{"policy", json::object{}}}), 400, "PUT /api/v1/capsules/{id}/policy");
  expect_refused(patch(json::object{{"colour", "blue"}}), 400, "colour");
  create_capsule(workspace_, "other");
  expect_refused(patch(json::object{{"name", "other"}}), 409, "already exists");
  expect_refused(patch(json::object{{"name", "x"}}, "cap_" + std::string(32, '0')), 404, "not found");
  // Nothing was changed by any of them.
  auto after = api(http::verb::get, "/api/v1/capsules/" + capsule_);
  EXPECT_EQ(after.obj().at("specRevision"), 1);
  EXPECT_EQ(after.obj().at("name"), "app");

  // The same values again are no change: no revision.
  auto same = patch(json::object{{"name", "app"}, {"source", json::object{{"modulePath", "infra"}}}});
  ASSERT_EQ(same.status, 200u) << same.body;
  EXPECT_EQ(same.obj().at("specRevision"), 1);
  // A rename is a change.
  auto renamed = patch(json::object{{"name", "app-two"}});
  ASSERT_EQ(renamed.status, 200u) << renamed.body;
  EXPECT_EQ(renamed.obj().at("specRevision"), 2);
  EXPECT_EQ(renamed.obj().at("name"), "app-two");
}

TEST_F(CapsuleChangeApiTest, AnOutputAnOutputShareOffersStaysUntilTheShareIsRevoked) {
  const std::string other = create_workspace("other");
  auto share = api(http::verb::post, "/api/v1/output-shares",
                   json::object{{"producerCapsuleId", capsule_}, {"toWorkspaceId", other},
                                {"outputs", json::array{"url"}}});
  ASSERT_EQ(share.status, 201u) << share.body;
  const json::object without_url{{"outputAllowlist", json::object{}}};
  expect_refused(patch(without_url), 409, "revoke the share first");
  EXPECT_NE(patch(without_url).body.find(share.str("id")), std::string::npos) << "names the share";
  EXPECT_EQ(api(http::verb::get, "/api/v1/capsules/" + capsule_).obj().at("specRevision"), 1);
  auto revoked = api(http::verb::post, "/api/v1/output-shares/" + share.str("id") + "/revoke");
  ASSERT_EQ(revoked.status, 200u) << revoked.body;
  auto changed = patch(without_url);
  ASSERT_EQ(changed.status, 200u) << changed.body;
  EXPECT_EQ(changed.obj().at("specRevision"), 2);
}

TEST_F(CapsuleChangeApiTest, RevisionsAreReadAPageAtATimeOldestFirst) {
  for (int i = 2; i <= 5; ++i)
    ASSERT_EQ(patch(json::object{{"name", "app-" + std::to_string(i)}}).status, 200u);
  std::vector<std::int64_t> seen;
  std::string cursor;
  for (int page = 0; page < 5; ++page) {
    auto r = api(http::verb::get, "/api/v1/capsules/" + capsule_ + "/revisions?limit=2" +
                                      (cursor.empty() ? "" : "&cursor=" + cursor));
    ASSERT_EQ(r.status, 200u) << r.body;
    const auto& list = r.obj().at("revisions").as_array();
    EXPECT_LE(list.size(), 2u) << r.body;
    for (const auto& revision : list) seen.push_back(revision.at("revision").as_int64());
    if (r.obj().at("nextCursor").is_null()) break;
    cursor = json::value_to<std::string>(r.obj().at("nextCursor"));
  }
  EXPECT_EQ(seen, (std::vector<std::int64_t>{1, 2, 3, 4, 5}));
  // A cursor of another Capsule's list is refused.
  const std::string other = create_capsule(workspace_, "other");
  auto first = api(http::verb::get, "/api/v1/capsules/" + capsule_ + "/revisions?limit=1");
  const std::string mine = json::value_to<std::string>(first.obj().at("nextCursor"));
  expect_refused(api(http::verb::get, "/api/v1/capsules/" + other + "/revisions?cursor=" + mine), 400,
                 "cursor");
  expect_refused(api(http::verb::get, "/api/v1/capsules/" + capsule_ + "/revisions?limit=0"), 400, "limit");
}

TEST_F(CapsuleChangeApiTest, OnlyAnOwnerChangesACapsule) {
  auto viewer = api(http::verb::post, "/api/v1/tokens",
                    json::object{{"name", "reader"}, {"roles", json::object{{workspace_, "operator"}}}});
  ASSERT_EQ(viewer.status, 201u) << viewer.body;
  auto refused = send(http::verb::patch, "/api/v1/capsules/" + capsule_,
                      json::serialize(json::object{{"name", "mine"}}),
                      {{"authorization", "Bearer " + viewer.str("secret")}});
  EXPECT_EQ(refused.status, 403u) << refused.body;
  EXPECT_EQ(api(http::verb::get, "/api/v1/capsules/" + capsule_).obj().at("name"), "app");
}

}  // namespace
}  // namespace takosumi::controlplane
