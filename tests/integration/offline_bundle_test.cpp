// Offline Runs across an air gap (docs/air-gapped.md) with the real binaries and OpenTofu: an
// offline agent, registered from its exported keys, whose configuration names no control plane,
// runs a plan → apply → drift-check cycle carried as Run bundles by the takosumi CLI; each result
// is imported and recorded as an online completion would be. Then what must be refused is: a
// bundle for another agent, a result with a flipped byte, a result replayed, a result whose prior
// generation is stale (kept, not lost).
#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include "common/encoding.hpp"
#include "crypto/keys.hpp"
#include "protocol/offline_bundle.hpp"
#include "git/source_cache.hpp"
#include "tests/support/stack.hpp"
#include "tests/support/test_git_repo.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Ran {
  int code = -1;
  std::string out;
};

class OfflineBundleTest : public ::testing::Test {
 protected:
  static StackOptions options() {
    StackOptions o;
    o.agents = 0;  // nothing claims: every Run goes through a bundle
    return o;
  }

  // env: the CLI's control plane and token; none for the offline agent, which has no network.
  Ran run(std::vector<std::string> argv, const std::string& log_name,
          std::map<std::string, std::string> env = {}) {
    const fs::path log = stack_.root() / (log_name + ".log");
    fs::remove(log);
    env["HOME"] = stack_.root().string();
    ChildProcess p(std::move(argv), std::move(env), log);
    Ran r;
    r.code = p.wait(std::chrono::seconds(600));
    r.out = slurp(log);
    return r;
  }
  Ran cli(std::vector<std::string> args, const std::string& log_name) {
    args.insert(args.begin(), (fs::path(test_paths::binary_dir) / "cli/takosumi").string());
    return run(std::move(args), log_name,
               {{"TAKOSUMI_DEPLOY_CONTROL_URL", "http://127.0.0.1:" + std::to_string(stack_.port())},
                {"TAKOSUMI_DEPLOY_CONTROL_TOKEN", "test-api-token-0123456789"}});
  }
  // takosumi-agent of the offline agent-<index> (its configuration has no control plane).
  Ran agent(int index, std::vector<std::string> args, const std::string& log_name) {
    args.insert(args.begin(), {(fs::path(test_paths::binary_dir) / "agent/takosumi-agent").string(),
                               "--config", stack_.offline_agent_config(index).string()});
    return run(std::move(args), log_name);
  }

  // `takosumi run-bundle export RUN --agent AGENT --out <name>.bundle`.
  Ran export_run(const std::string& run_id, const std::string& agent_id, const std::string& name,
                 const std::string& log_name) {
    return cli({"run-bundle", "export", run_id, "--agent", agent_id, "--out",
                file(name + ".bundle").string()},
               log_name);
  }
  // The offline agent-<index>'s `run-bundle execute <bundle> --out <result>`.
  Ran execute(int index, const std::string& bundle, const std::string& result,
              const std::string& log_name) {
    return agent(index, {"run-bundle", "execute", file(bundle).string(), "--out",
                         file(result).string()},
                 log_name);
  }

  // An offline pool with offline agent-<index> registered from its exported keys; its id.
  std::string register_offline_agent(int index) {
    if (!pool_made_) {
      auto pool = stack_.api().post("/api/v1/agent-pools",
                                    json::object{{"name", "site-a"},
                                                 {"workspaces", json::array{"*"}},
                                                 {"offline", true}});
      EXPECT_EQ(pool.status, 201u) << pool.body;
      pool_made_ = true;
    }
    auto keys = agent(index, {"keys", "export"}, "keys-" + std::to_string(index));
    EXPECT_EQ(keys.code, 0) << keys.out;
    const fs::path file = stack_.root() / ("keys-" + std::to_string(index) + ".json");
    std::ofstream(file) << keys.out;
    auto reg = cli({"--output", "json", "agents", "register-offline", file.string(), "--pool", "site-a"},
                   "register-" + std::to_string(index));
    EXPECT_EQ(reg.code, 0) << reg.out;
    return str(json::parse(keys.out).as_object(), "agentId");
  }

  std::string make_capsule() {
    fs::create_directories(out_dir());
    repo_ = std::make_unique<TestGitRepo>(stack_.root() / "repo");
    repo_->commit({{"main.tf", example_module("offline")}});
    return stack_.create_capsule_from(json::object{
        {"name", "site-app"},
        {"source", json::object{{"gitUrl", repo_->url()}, {"ref", "main"}, {"modulePath", ""}}},
        {"variables", json::object{{"out_dir", out_dir().string()}}},
        {"outputAllowlist",
         json::object{{"endpoint", json::object{{"from", "endpoint"}, {"type", "string"}}},
                      {"dbPassword", json::object{{"from", "db_password"}, {"type", "string"}}}}},
        {"agentPool", "site-a"}});
  }
  fs::path out_dir() const { return stack_.real_world() / "site"; }
  fs::path file(const std::string& name) const { return stack_.root() / name; }

  // One Run across the gap: exported for the agent, executed there, its result imported. Returns
  // the import's answer (JSON), and leaves the result file as <name>.result.
  json::object carry(const std::string& run_id, const std::string& agent_id, const std::string& name,
                     int agent_index = 0) {
    auto exported = export_run(run_id, agent_id, name, "export-" + name);
    EXPECT_EQ(exported.code, 0) << exported.out;
    auto executed = execute(agent_index, name + ".bundle", name + ".result", "execute-" + name);
    EXPECT_EQ(executed.code, 0) << executed.out;
    auto imported = cli({"--output", "json", "run-bundle", "import", file(name + ".result").string()},
                        "import-" + name);
    EXPECT_EQ(imported.code, 0) << imported.out;
    auto parsed = json::parse(imported.out.substr(imported.out.find('{')));
    return parsed.as_object();
  }

  std::string queue(const std::string& target, const json::object& body = {}) {
    auto r = stack_.api().post(target, body);
    EXPECT_EQ(r.status, 201u) << r.body;
    return r.json.is_object() ? str(r.json.as_object(), "id") : "";
  }
  json::object get_run(const std::string& id) {
    return stack_.api().get("/api/v1/runs/" + id).json.as_object();
  }

  // A copy of a Run bundle with its manifest changed by `edit` and signed again with the control
  // plane's own key (what it would have signed), or with another source pack in place of its own.
  void rewrite(const fs::path& from, const fs::path& to,
               const std::function<void(protocol::JobManifest&, const fs::path&)>& edit,
               const fs::path& source_pack = {},
               const std::function<void(protocol::RunBundleIndex&)>& edit_index = {}) {
    auto opened = protocol::open_bundle(from);
    ASSERT_TRUE(opened);
    auto index = protocol::run_bundle_index_from_text(opened->index);
    ASSERT_TRUE(index);
    const fs::path dir = to.string() + ".members";
    ASSERT_TRUE(protocol::extract_members(*opened, index->members, dir, 1u << 30));
    if (edit) {
      auto payload = base64_decode(index->manifest.payload);
      ASSERT_TRUE(payload);
      auto manifest = protocol::job_manifest_from_json(
          json::parse(std::string(payload->begin(), payload->end())).as_object());
      ASSERT_TRUE(manifest);
      edit(*manifest, dir);
      auto key = crypto::load_sign_key(stack_.data_dir() / "keys/signing.key");
      ASSERT_TRUE(key);
      index->manifest = protocol::sign_manifest(*manifest, *key);
    }
    if (!source_pack.empty()) fs::copy_file(source_pack, dir / "source.pack",
                                            fs::copy_options::overwrite_existing);
    if (edit_index) edit_index(*index);
    std::vector<std::pair<std::string, fs::path>> files;
    for (const auto& m : index->members) files.emplace_back(m.name, dir / m.name);
    auto members = protocol::describe_members(files);
    ASSERT_TRUE(members);
    index->members = *members;
    ASSERT_TRUE(protocol::write_bundle(to, protocol::to_text(*index), files));
  }

  Stack stack_{options()};
  std::unique_ptr<TestGitRepo> repo_;
  bool pool_made_ = false;
};

TEST_F(OfflineBundleTest, PlanApplyAndDriftCheckCrossTheGapAsBundles) {
  const std::string agent_id = register_offline_agent(0);
  ASSERT_EQ(agent_id.rfind("agt_", 0), 0u) << agent_id;
  const auto capsule = make_capsule();

  const auto plan_id = queue("/api/v1/capsules/" + capsule + "/plan");
  auto plan = carry(plan_id, agent_id, "plan");
  EXPECT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan);
  auto plan_run = get_run(plan_id);
  ASSERT_EQ(str(plan_run, "status"), "succeeded") << json::serialize(plan_run);
  EXPECT_EQ(plan_run.at("hasChanges"), json::value(true));
  // Nothing of the plan touched the site's world; the logs came back with the result.
  EXPECT_FALSE(fs::exists(out_dir() / "app.conf"));
  auto logs = stack_.api().get("/api/v1/runs/" + plan_id + "/logs").body;
  EXPECT_NE(logs.find("random_password.db"), std::string::npos) << logs;

  // Reviewed, then applied across the gap: the apply bundle carries the reviewed plan.
  auto apply_answer = stack_.post_apply(plan_id, false);
  ASSERT_EQ(apply_answer.status, 201u) << apply_answer.body;
  const auto apply_id = str(apply_answer.json.as_object(), "id");
  auto applied = carry(apply_id, agent_id, "apply");
  EXPECT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied);
  EXPECT_FALSE(str(applied, "stateVersionId").empty()) << json::serialize(applied);
  EXPECT_TRUE(fs::exists(out_dir() / "app.conf"));
  auto versions = stack_.state_versions(capsule);
  ASSERT_EQ(versions.size(), 1u);
  auto outputs = stack_.api().get("/api/v1/capsules/" + capsule + "/outputs");
  EXPECT_NE(outputs.body.find("file://"), std::string::npos) << outputs.body;
  const std::string password = slurp(out_dir() / "db.password");
  ASSERT_FALSE(password.empty());
  EXPECT_EQ(outputs.body.find(password), std::string::npos);
  // The secret nowhere the control plane shows, nor in the result files carried back.
  EXPECT_EQ(stack_.public_surface({capsule}, {}).find(password), std::string::npos);
  EXPECT_EQ(slurp(file("apply.result")).find(password), std::string::npos);
  EXPECT_EQ(slurp(file("plan.result")).find(password), std::string::npos);

  // A read-only drift check the same way: nothing drifted.
  const auto drift_id = queue("/api/v1/capsules/" + capsule + "/drift-check");
  auto drift = carry(drift_id, agent_id, "drift");
  EXPECT_EQ(str(drift, "status"), "succeeded") << json::serialize(drift);
  EXPECT_EQ(stack_.state_versions(capsule).size(), 1u);

  // The same result imported again changes nothing.
  auto again = cli({"--output", "json", "run-bundle", "import", file("apply.result").string()},
                   "import-again");
  EXPECT_EQ(again.code, 0) << again.out;
  EXPECT_NE(again.out.find("\"imported\":false"), std::string::npos) << again.out;
  EXPECT_EQ(stack_.state_versions(capsule).size(), 1u);
}

TEST_F(OfflineBundleTest, ForeignExpiredSwappedAndTamperedBundlesAreRefused) {
  const std::string agent_id = register_offline_agent(0);
  const std::string other_id = register_offline_agent(1);
  const auto capsule = make_capsule();
  const auto plan_id = queue("/api/v1/capsules/" + capsule + "/plan");
  auto exported = export_run(plan_id, agent_id, "plan", "export");
  ASSERT_EQ(exported.code, 0) << exported.out;
  // Exported again to the same agent while it is out (lost media): the same bundle, not a second
  // Run; to another agent: refused.
  auto twice = export_run(plan_id, agent_id, "plan2", "export-twice");
  EXPECT_EQ(twice.code, 0) << twice.out;
  EXPECT_EQ(slurp(file("plan2.bundle")), slurp(file("plan.bundle")));
  auto elsewhere = export_run(plan_id, other_id, "plan3", "export-elsewhere");
  EXPECT_EQ(elsewhere.code, 5) << elsewhere.out;

  // Another agent's keys cannot run it.
  auto foreign = execute(1, "plan.bundle", "foreign.result", "foreign");
  EXPECT_EQ(foreign.code, 1) << foreign.out;
  EXPECT_NE(foreign.out.find("manifest_wrong_agent"), std::string::npos) << foreign.out;
  EXPECT_FALSE(fs::exists(file("foreign.result")));

  // The same Run as if its bundle had expired on the way: the control plane's own signature over
  // a manifest whose expiry has passed.
  rewrite(file("plan.bundle"), file("expired.bundle"), [](protocol::JobManifest& m, const fs::path&) {
    m.issued_at -= 7200;
    m.expires_at = m.issued_at + 3600;
  });
  auto expired = execute(0, "expired.bundle", "expired.result", "expired");
  EXPECT_EQ(expired.code, 1) << expired.out;
  EXPECT_NE(expired.out.find("manifest_expired"), std::string::npos) << expired.out;
  // The index's run id and lease are not signed, but they are bound to the manifest: relabelled,
  // the bundle is refused before anything runs (its result could otherwise be another Run's).
  rewrite(file("plan.bundle"), file("relabelled.bundle"), {}, {},
          [](protocol::RunBundleIndex& index) { index.lease_token = std::string(64, 'a'); });
  auto relabelled = execute(0, "relabelled.bundle", "relabelled.result", "relabelled");
  EXPECT_EQ(relabelled.code, 1) << relabelled.out;
  EXPECT_NE(relabelled.out.find("bundle_invalid"), std::string::npos) << relabelled.out;
  rewrite(file("plan.bundle"), file("renamed.bundle"), {}, {},
          [](protocol::RunBundleIndex& index) { index.run_id = "run_0123456789abcdef0123456789abcdef"; });
  auto renamed = execute(0, "renamed.bundle", "renamed.result", "renamed");
  EXPECT_EQ(renamed.code, 1) << renamed.out;
  EXPECT_NE(renamed.out.find("bundle_invalid"), std::string::npos) << renamed.out;
  EXPECT_FALSE(fs::exists(file("relabelled.result")) || fs::exists(file("renamed.result")));
  // Another commit's source in place of the signed one: the Run fails before anything runs.
  {
    TestGitRepo other(stack_.root() / "other-repo");
    const auto commit = other.commit({{"main.tf", "resource \"null_resource\" \"x\" {}\n"}});
    git::FetchSettings fetch;
    fetch.helper = fs::path(test_paths::binary_dir) / "agent/takosumi-agent";
    auto packed = git::pack_source(stack_.root() / "other-cache", "ws_other", other.url(), commit,
                                   std::nullopt, fetch, stack_.root() / "other.pack");
    ASSERT_TRUE(packed) << packed.error().to_string();
  }
  rewrite(file("plan.bundle"), file("swapped.bundle"), {}, stack_.root() / "other.pack");
  auto swapped = execute(0, "swapped.bundle", "swapped.result", "swapped");
  EXPECT_EQ(swapped.code, 0) << swapped.out;  // a result is written: the Run failed
  EXPECT_NE(slurp(file("swapped.result")).find("source_tree_mismatch"), std::string::npos)
      << swapped.out;
  EXPECT_FALSE(fs::exists(out_dir() / "app.conf"));
  // Its nonce was spent on the swapped copy: the genuine bundle is now a replay.
  auto replayed = execute(0, "plan.bundle", "replayed.result", "replayed");
  EXPECT_NE(replayed.out.find("manifest_replayed"), std::string::npos) << replayed.out;
}

// A copy damaged on the media fails before anything runs; the genuine copy then runs, once: with
// its directory removed afterwards (as after an import), a third try is a replay.
TEST_F(OfflineBundleTest, ABundleRunsOnceEvenAfterADamagedCopyWasTriedFirst) {
  const std::string agent_id = register_offline_agent(0);
  const auto capsule = make_capsule();
  const auto plan_id = queue("/api/v1/capsules/" + capsule + "/plan");
  ASSERT_EQ(export_run(plan_id, agent_id, "plan", "export").code, 0);
  fs::copy_file(file("plan.bundle"), file("damaged.bundle"));
  {
    std::fstream f(file("damaged.bundle"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-100, std::ios::end);
    char c = 0;
    f.get(c);
    f.seekp(-100, std::ios::end);
    f.put(static_cast<char>(c ^ 1));
  }
  auto damaged = execute(0, "damaged.bundle", "damaged.result", "execute-damaged");
  EXPECT_EQ(damaged.code, 1) << damaged.out;
  EXPECT_NE(damaged.out.find("bundle_invalid"), std::string::npos) << damaged.out;
  auto genuine = execute(0, "plan.bundle", "plan.result", "execute-genuine");
  ASSERT_EQ(genuine.code, 0) << genuine.out;
  EXPECT_NE(slurp(file("plan.result")).find("succeeded"), std::string::npos);
  fs::remove_all(stack_.agent_dir(0) / "state/offline" / plan_id);
  auto again = execute(0, "plan.bundle", "again.result", "execute-again");
  EXPECT_EQ(again.code, 1) << again.out;
  EXPECT_NE(again.out.find("manifest_replayed"), std::string::npos) << again.out;
}

TEST_F(OfflineBundleTest, TamperedAndReplayedResultsAreRefused) {
  const std::string agent_id = register_offline_agent(0);
  const auto capsule = make_capsule();
  const auto plan_id = queue("/api/v1/capsules/" + capsule + "/plan");
  auto exported = export_run(plan_id, agent_id, "plan", "export");
  ASSERT_EQ(exported.code, 0) << exported.out;
  auto executed = execute(0, "plan.bundle", "plan.result", "execute");
  ASSERT_EQ(executed.code, 0) << executed.out;

  // One byte of the result flipped: refused, nothing recorded.
  {
    fs::copy_file(file("plan.result"), file("flipped.result"));
    std::fstream f(file("flipped.result"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-10, std::ios::end);
    char c = 0;
    f.get(c);
    f.seekp(-10, std::ios::end);
    f.put(static_cast<char>(c ^ 1));
  }
  auto flipped = cli({"run-bundle", "import", file("flipped.result").string()}, "import-flipped");
  EXPECT_EQ(flipped.code, 5) << flipped.out;
  EXPECT_NE(flipped.out.find("bundle_invalid"), std::string::npos) << flipped.out;
  EXPECT_EQ(str(get_run(plan_id), "status"), "running");
  // The index's signature covers every member's digest: an index edited to match is refused too.
  {
    std::string bytes = slurp(file("plan.result"));
    const auto at = bytes.find("\"attempt\\\":1");
    ASSERT_NE(at, std::string::npos);
    bytes[at + 11] = '2';
    std::ofstream(file("forged.result"), std::ios::binary) << bytes;
  }
  auto forged = cli({"run-bundle", "import", file("forged.result").string()}, "import-forged");
  EXPECT_EQ(forged.code, 5) << forged.out;
  EXPECT_NE(forged.out.find("bundle_"), std::string::npos) << forged.out;

  auto imported = cli({"run-bundle", "import", file("plan.result").string()}, "import");
  ASSERT_EQ(imported.code, 0) << imported.out;
  EXPECT_EQ(str(get_run(plan_id), "status"), "succeeded");
  // Replayed: the attempt is recorded already, nothing changes.
  auto replayed = cli({"--output", "json", "run-bundle", "import", file("plan.result").string()},
                      "import-replayed");
  EXPECT_EQ(replayed.code, 0) << replayed.out;
  EXPECT_NE(replayed.out.find("\"imported\":false"), std::string::npos) << replayed.out;
  // A tampered copy stays refused after the genuine one was recorded.
  auto flipped_again = cli({"run-bundle", "import", file("flipped.result").string()},
                           "import-flipped-again");
  EXPECT_EQ(flipped_again.code, 5) << flipped_again.out;
}

// An apply exported and then cancelled (the site may still apply it); the Capsule moves on
// through another plan and apply; the first apply's result, brought back late, is kept as a blob
// and shown as the Capsule's attention, never recorded over the newer state.
TEST_F(OfflineBundleTest, AResultFromAStaleGenerationIsKeptNotRecorded) {
  const std::string agent_id = register_offline_agent(0);
  const auto capsule = make_capsule();
  const auto first_plan = queue("/api/v1/capsules/" + capsule + "/plan");
  ASSERT_EQ(str(carry(first_plan, agent_id, "plan1"), "status"), "succeeded");
  auto first_apply = stack_.post_apply(first_plan, false);
  ASSERT_EQ(first_apply.status, 201u) << first_apply.body;
  const auto stale_id = str(first_apply.json.as_object(), "id");
  ASSERT_EQ(export_run(stale_id, agent_id, "stale", "export-stale").code,
            0);
  ASSERT_EQ(execute(0, "stale.bundle", "stale.result", "execute-stale").code,
            0);
  // Nobody can tell the site: the cancel ends the exported apply here and now.
  auto cancelled = stack_.api().post("/api/v1/runs/" + stale_id + "/cancel", json::object{});
  ASSERT_EQ(cancelled.status, 200u) << cancelled.body;
  EXPECT_EQ(str(cancelled.json.as_object(), "status"), "cancelled") << cancelled.body;

  const auto second_plan = queue("/api/v1/capsules/" + capsule + "/plan");
  ASSERT_EQ(str(carry(second_plan, agent_id, "plan2"), "status"), "succeeded");
  auto second_apply = stack_.post_apply(second_plan, false);
  ASSERT_EQ(second_apply.status, 201u) << second_apply.body;
  ASSERT_EQ(str(carry(str(second_apply.json.as_object(), "id"), agent_id, "apply2"), "status"),
            "succeeded");
  ASSERT_EQ(stack_.state_versions(capsule).size(), 1u);

  auto late = cli({"run-bundle", "import", file("stale.result").string()}, "import-stale");
  EXPECT_EQ(late.code, 5) << late.out;
  EXPECT_NE(late.out.find("kept"), std::string::npos) << late.out;
  EXPECT_EQ(stack_.state_versions(capsule).size(), 1u);
  auto attention = stack_.capsule(capsule);
  EXPECT_NE(json::serialize(attention).find("result_kept"), std::string::npos)
      << json::serialize(attention);
  EXPECT_NE(json::serialize(attention).find(stale_id), std::string::npos);
}

// The offline agent killed (SIGKILL, as a power loss would) while its apply runs: the same
// command again reports the interrupted apply with the state tofu persisted, and the import keeps
// it as a partial StateVersion holding what the apply created.
TEST_F(OfflineBundleTest, AnOfflineApplyKilledMidwayIsReportedWithItsStateByTheNextExecute) {
  const std::string agent_id = register_offline_agent(0);
  repo_ = std::make_unique<TestGitRepo>(stack_.root() / "repo");
  repo_->commit({{"main.tf", slow_apply_module()}});
  const auto capsule = stack_.create_capsule_from(json::object{
      {"name", "slow-site"},
      {"source", json::object{{"gitUrl", repo_->url()}, {"ref", "main"}, {"modulePath", ""}}},
      {"outputAllowlist", json::object{}},
      {"agentPool", "site-a"}});
  const auto plan_id = queue("/api/v1/capsules/" + capsule + "/plan");
  ASSERT_EQ(str(carry(plan_id, agent_id, "plan"), "status"), "succeeded");
  auto apply = stack_.post_apply(plan_id, false);
  ASSERT_EQ(apply.status, 201u) << apply.body;
  const auto apply_id = str(apply.json.as_object(), "id");
  ASSERT_EQ(export_run(apply_id, agent_id, "apply", "export-apply").code,
            0);
  {
    ChildProcess site({(fs::path(test_paths::binary_dir) / "agent/takosumi-agent").string(),
                       "--config", stack_.offline_agent_config(0).string(), "run-bundle", "execute",
                       file("apply.bundle").string(), "--out", file("apply.result").string()},
                      {{"HOME", stack_.root().string()}}, stack_.root() / "execute-killed.log");
    // Killed once the apply changed reality: its log, kept for the result as it streams, says the
    // first resource was created (the second sleeps for five minutes).
    const fs::path logs = stack_.agent_dir(0) / "state/offline" / apply_id / "out/log";
    ASSERT_TRUE(eventually(
        [&] {
          std::error_code ec;
          if (!fs::exists(logs, ec)) return false;
          for (const auto& e : fs::directory_iterator(logs, ec))
            if (slurp(e.path()).find("terraform_data.first: Creation complete") != std::string::npos)
              return true;
          return false;
        },
        std::chrono::seconds(180)))
        << slurp(stack_.root() / "execute-killed.log");
    site.kill_now();
  }
  EXPECT_FALSE(fs::exists(file("apply.result")));
  auto again = execute(0, "apply.bundle", "apply.result", "execute-again");
  ASSERT_EQ(again.code, 0) << again.out;
  auto imported = cli({"--output", "json", "run-bundle", "import", file("apply.result").string()},
                      "import-apply");
  ASSERT_EQ(imported.code, 0) << imported.out;
  auto run = get_run(apply_id);
  EXPECT_EQ(str(run, "status"), "failed") << json::serialize(run);
  EXPECT_EQ(failure_code(run), "interrupted") << json::serialize(run);
  auto versions = stack_.state_versions(capsule);
  ASSERT_EQ(versions.size(), 1u);
  const auto& sv = versions[0].as_object();
  EXPECT_TRUE(sv.at("partial").as_bool());
  EXPECT_NE(stack_.state_plaintext(str(sv, "ciphertextSha256")).find("terraform_data"),
            std::string::npos);
}

}  // namespace
}  // namespace takosumi::testing
