// What a module can reach and what it can make tofu run, end to end with the real agent,
// bubblewrap, takosumi-confine and OpenTofu: OpenTofu's own encryption configuration (which can
// name programs), override files replacing the agent's backend, plugin binaries shipped in the
// repository, symbolic links that lead elsewhere than their text says, and modules called from
// elsewhere in a monorepo. Where the scan can see it, the Run fails before `tofu init` with the
// stated code; where it cannot (a file written during the apply), the kernel refuses the program.
#include <gtest/gtest.h>

#include "tests/support/probe_module.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;

const json::object kPermissive{{"allowProvisioners", true}, {"allowExternalData", true}};

std::string capsule_of(Stack& stack, TestGitRepo& repo, const std::string& module_path,
                       const json::object& policy = {}) {
  static int count = 0;
  return stack.create_capsule_from(json::object{
      {"name", "scan-" + std::to_string(++count)},
      {"source", json::object{{"gitUrl", repo.url()}, {"ref", "main"}, {"modulePath", module_path}}},
      {"outputAllowlist", json::object{}},
      {"policy", policy}});
}

// Commits files to a fresh repository and plans a Capsule of it.
json::object plan_files(Stack& stack, const std::map<std::string, std::string>& files,
                        const json::object& policy = {}, const std::string& module_path = "") {
  static int count = 0;
  TestGitRepo repo(stack.root() / ("repo-" + std::to_string(++count)));
  repo.commit(files);
  return stack.plan(capsule_of(stack, repo, module_path, policy));
}

// OpenTofu's external key provider: a program tofu runs whenever it builds the encryption.
std::string encryption_block(const fs::path& marker) {
  return "  encryption {\n"
         "    key_provider \"external\" \"k\" {\n"
         "      command = [\"/bin/sh\", \"-c\", \"touch " + marker.string() + "\"]\n"
         "    }\n"
         "    method \"aes_gcm\" \"m\" {\n      keys = key_provider.external.k\n    }\n"
         "    state {\n      method = method.aes_gcm.m\n    }\n"
         "  }\n";
}

::testing::AssertionResult refused_before_init(Stack& stack, const json::object& run,
                                               const std::string& code, const std::string& text) {
  const auto logs = run_logs(stack, run);
  if (str(run, "status") != "failed" || failure_code(run) != code)
    return ::testing::AssertionFailure() << "expected " << code << ": " << json::serialize(run);
  const auto message = str(run.at("failure").as_object(), "message");
  if (message.find(text) == std::string::npos)
    return ::testing::AssertionFailure() << "message lacks \"" << text << "\": " << message;
  if (logs.find("Initializing") != std::string::npos)
    return ::testing::AssertionFailure() << "tofu init ran:\n" << logs;
  return ::testing::AssertionSuccess();
}

TEST(ModuleScan, AnEncryptionBlockIsRefusedBeforeInitWhateverThePolicy) {
  Stack stack;
  const fs::path marker = stack.real_world() / "key-provider.marker";
  const auto plan = plan_files(stack, {{"main.tf", "resource \"terraform_data\" \"x\" {}\n"},
                                       {"zz.tofu", "terraform {\n" + encryption_block(marker) + "}\n"}},
                               kPermissive);
  EXPECT_TRUE(refused_before_init(stack, plan, "encryption_config_denied", "zz.tofu:2: terraform { encryption }"));
  EXPECT_FALSE(fs::exists(marker)) << "the key provider's program ran";
}

// The scan never sees a file an allowed provider writes during the apply. No tofu command runs in
// the module's directory after the apply (the Outputs come from the new state), so such a file is
// never read — here even with a policy that lets /bin/sh execute.
TEST(ModuleScan, AnEncryptionConfigWrittenDuringTheApplyIsNeverRead) {
  Stack stack;
  const fs::path marker = stack.real_world() / "written.marker";
  const std::string module = "resource \"local_file\" \"config\" {\n"
                             "  filename = \"${path.module}/written.tf\"\n"
                             "  content  = <<-EOT\n    terraform {\n" + encryption_block(marker) +
                             "    }\n  EOT\n}\noutput \"kept\" {\n  value = \"yes\"\n}\n";
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", module}});
  const auto capsule = stack.create_capsule_from(json::object{
      {"name", "written"},
      {"source", json::object{{"gitUrl", repo.url()}, {"ref", "main"}, {"modulePath", ""}}},
      {"outputAllowlist", json::object{{"kept", json::object{{"from", "kept"}, {"type", "string"}}}}},
      {"policy", kPermissive}});
  const auto applied = plan_and_apply(stack, capsule);
  EXPECT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied) << run_logs(stack, applied);
  EXPECT_NE(run_logs(stack, applied).find("local_file.config: Creation complete"), std::string::npos)
      << run_logs(stack, applied);
  EXPECT_FALSE(fs::exists(marker)) << "the key provider's program ran";
  const auto outputs = stack.api().get("/api/v1/capsules/" + capsule + "/outputs").body;
  EXPECT_NE(outputs.find("\"yes\""), std::string::npos) << outputs;
}

// A later override file would replace the agent's local backend; and a module's
// takosumi_override.tofu must not shadow the agent's own override file.
TEST(ModuleScan, OverrideFilesCannotMoveTheStateAwayFromTheAgent) {
  Stack stack;
  const auto plan = plan_files(
      stack, {{"main.tf", "resource \"terraform_data\" \"x\" {}\n"},
              {"zzz_override.tf", "terraform {\n  backend \"local\" {\n    path = \"/tmp/away.tfstate\"\n  }\n}\n"}},
      kPermissive);
  EXPECT_TRUE(refused_before_init(stack, plan, "backend_config_denied",
                                  "zzz_override.tf:2: backend \"local\" in an override file"));

  TestGitRepo shadow(stack.root() / "shadow");
  shadow.commit({{"main.tf", "terraform {\n  backend \"local\" {\n    path = \"away.tfstate\"\n  }\n}\n"
                             "resource \"terraform_data\" \"x\" {}\n"},
                 {"takosumi_override.tofu", "# would hide the agent's override file\n"}});
  const auto capsule = capsule_of(stack, shadow, "");
  const auto applied = plan_and_apply(stack, capsule);
  ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied) << run_logs(stack, applied);
  EXPECT_EQ(stack.state_versions(capsule).size(), 1u) << "the state did not reach the agent";
}

TEST(ModuleScan, APluginBinaryInTheRepositoryIsRefused) {
  Stack stack;
  const auto plan = plan_files(stack, {{"main.tf", "resource \"terraform_data\" \"x\" {}\n"},
                                       {"terraform-provisioner-local-exec*", "#!/bin/sh\ntouch /tmp/x\n"}},
                               kPermissive);
  EXPECT_TRUE(refused_before_init(stack, plan, "provider_policy_denied",
                                  "terraform-provisioner-local-exec: a plugin binary"));
}

// git_source refuses links whose text leaves the checkout; this one stays inside as text
// (deep/er/b/../../../x is x) but b leads to the root, so it physically climbs three levels above
// the checkout, where a sandbox may find something else than the agent does.
TEST(ModuleScan, ALinkThatClimbsThroughAnotherLinkIsRefusedBeforeInit) {
  Stack stack;
  const auto plan = plan_files(stack, {{"main.tf", "module \"m\" {\n  source = \"./mod\"\n}\n"},
                                       {"deep/er/b@", "../.."},
                                       {"mod@", "deep/er/b/../../../proc/self/cwd/.payload"},
                                       {".payload/main.tf", "resource \"terraform_data\" \"x\" {}\n"}});
  EXPECT_TRUE(refused_before_init(stack, plan, "provisioner_denied",
                                  "mod: symbolic link leads outside the checkout"));
}

// A module `tofu init` fetched is read by the scan after init, with the same link rules. git
// clones create links as committed (go-getter's archives never do); git must be allowed to run.
TEST(ModuleScan, AnAbsoluteLinkInAModuleInitFetchedIsRefusedBeforePlan) {
  StackOptions options;
  options.sandbox_extra = "  execAllow: [/bin/sh, /usr/bin, /usr/lib/git-core]\n";
  Stack stack(options);
  TestGitRepo child(stack.real_world() / "child");  // the sandbox sees only real_world()
  // Dangling for the agent; inside the sandbox /proc/self/cwd is tofu's working directory, so tofu
  // loads the payload as part of the module.
  child.commit({{"main.tf", "output \"x\" {\n  value = 1\n}\n"},
                {"payload.txt", "resource \"terraform_data\" \"p\" {}\n"},
                {"evil.tf@", "/proc/self/cwd/.terraform/modules/m/payload.txt"}});
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", "module \"m\" {\n  source = \"git::" + child.url() + "\"\n}\n"}});
  // Programs allowed (git must run), external data not: an incomplete scan is still refused.
  const auto plan = stack.plan(capsule_of(stack, repo, "", json::object{{"allowProvisioners", true}}));
  ASSERT_EQ(str(plan, "status"), "failed") << json::serialize(plan);
  EXPECT_EQ(failure_code(plan), "external_data_denied") << json::serialize(plan);
  EXPECT_NE(str(plan.at("failure").as_object(), "message")
                .find(".terraform/modules/m/evil.tf: symbolic link goes through an absolute link"),
            std::string::npos)
      << json::serialize(plan);
}

// Hidden directories are read like any other, also through links: their provisioners are seen.
TEST(ModuleScan, ALinkIntoAHiddenDirectoryIsFollowedAndReadByTheScan) {
  Stack stack;
  const fs::path marker = stack.real_world() / "hidden.marker";
  const auto plan = plan_files(stack, {{"main.tf", "module \"m\" {\n  source = \"./mod\"\n}\n"},
                                       {"mod@", ".hidden/mod"},
                                       {".hidden/mod/main.tf", provisioner_module("touch " + marker.string())}});
  EXPECT_TRUE(refused_before_init(stack, plan, "provisioner_denied",
                                  ".hidden/mod/main.tf:11: local-exec in null_resource.probe"));
  EXPECT_FALSE(fs::exists(marker));
}

// The common monorepo layout: infra/app calls ../../modules/label. The default policy must not
// force a downgrade for a layout; what the calls reach is read, and nothing outside the checkout.
TEST(ModuleScan, AMonorepoModuleCallingSharedModulesRunsUnderTheDefaultPolicy) {
  Stack stack;
  const fs::path marker = stack.real_world() / "monorepo.marker";
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"infra/app/main.tf", "module \"label\" {\n  source = \"../../modules/label\"\n}\n"
                                     "output \"id\" {\n  value = module.label.id\n}\n"},
               {"modules/label/main.tf", "resource \"terraform_data\" \"l\" {\n  input = \"app\"\n}\n"
                                         "output \"id\" {\n  value = terraform_data.l.output\n}\n"},
               {"infra/evil/main.tf", "module \"tool\" {\n  source = \"../../modules/tool\"\n}\n"},
               {"modules/tool/main.tf", provisioner_module("touch " + marker.string())}});
  const auto applied = plan_and_apply(stack, capsule_of(stack, repo, "infra/app"));
  EXPECT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied) << run_logs(stack, applied);

  const auto evil = stack.plan(capsule_of(stack, repo, "infra/evil"));
  EXPECT_TRUE(refused_before_init(stack, evil, "provisioner_denied",
                                  "../../modules/tool/main.tf:11: local-exec in null_resource.probe"));
  EXPECT_FALSE(fs::exists(marker));
}

// OpenTofu reads ..\tool as ../tool; a directory literally named "..\tool" is only a decoy.
TEST(ModuleScan, ABackslashSourceCannotHideACalledModule) {
  Stack stack;
  const fs::path marker = stack.real_world() / "backslash.marker";
  const auto plan = plan_files(
      stack, {{"app/main.tf", "module \"m\" {\n  source = \"..\\\\tool\"\n}\n"},
              {"app/..\\tool/main.tf", "# decoy\n"},
              {"tool/main.tf", provisioner_module("touch " + marker.string())}},
      {}, "app");
  EXPECT_TRUE(refused_before_init(stack, plan, "provisioner_denied",
                                  "../tool/main.tf:11: local-exec in null_resource.probe"));
  EXPECT_FALSE(fs::exists(marker));
}

TEST(ModuleScan, LocalCommandIsRefusedLikeExternalData) {
  Stack stack;
  const fs::path marker = stack.real_world() / "local-command.marker";
  const auto plan = plan_files(
      stack, {{"main.tf", "data \"local_command\" \"c\" {\n  command   = \"/usr/bin/touch\"\n"
                          "  arguments = [\"" + marker.string() + "\"]\n}\n"}});
  EXPECT_TRUE(refused_before_init(stack, plan, "external_data_denied",
                                  "main.tf:1: data.local_command.c (runs a command)"));
  EXPECT_FALSE(fs::exists(marker));
}

// tofu itself may always execute, so a program the module may start can start another tofu. It
// sees only the providers the Run's policy allows.
TEST(ModuleScan, ANestedTofuCannotReachAProviderThePolicyDenies) {
  auto module = [](const fs::path& marker) {
    const std::string nested = "terraform {\n  required_providers {\n    random = { source = \"hashicorp/random\" }\n  }\n}\n";
    return "data \"local_command\" \"nested\" {\n  command   = \"/bin/sh\"\n"
           "  arguments = [\"-c\", <<-EOT\n"
           "    mkdir -p n && printf '%s' '" + nested + "' > n/main.tf && \\\n"
           "    '" + std::string(test_paths::tofu) + "' -chdir=n init -input=false && touch " +
           marker.string() + "\n    EOT\n  ]\n  allow_non_zero_exit_code = true\n}\n";
  };
  Stack stack;
  const fs::path denied = stack.real_world() / "denied.marker";
  json::object policy{{"allowExternalData", true},
                      {"deniedProviders", json::array{"registry.opentofu.org/hashicorp/random"}}};
  const auto plan = plan_files(stack, {{"main.tf", module(denied)}}, policy);
  EXPECT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan) << run_logs(stack, plan);
  EXPECT_FALSE(fs::exists(denied)) << "the nested tofu installed a denied provider";

  // Control: without the deny list the same nested init finds the provider.
  const fs::path allowed = stack.real_world() / "allowed.marker";
  const auto control = plan_files(stack, {{"main.tf", module(allowed)}}, json::object{{"allowExternalData", true}});
  EXPECT_EQ(str(control, "status"), "succeeded") << json::serialize(control) << run_logs(stack, control);
  EXPECT_TRUE(fs::exists(allowed)) << run_logs(stack, control);
}

}  // namespace
}  // namespace takosumi::testing
