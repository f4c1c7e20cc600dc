#include <gtest/gtest.h>

#include <filesystem>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "config/agent_config.hpp"
#include "config/agent_config_reload.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::config {
namespace {

class AgentConfigTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(write_file_atomic(dir_ / "pool.token", "pool-secret\n")); }

  Result<AgentConfig> load(const std::string& yaml, const Environment& env = {}) {
    EXPECT_TRUE(write_file_atomic(dir_ / "agent.yaml", yaml));
    return load_agent_config(dir_ / "agent.yaml", env);
  }

  static constexpr const char* kValid = R"(
controlPlane:
  url: http://127.0.0.1:9000
  signingPublicKeyFile: control.pub
poolTokenFile: pool.token
name: worker-1
labels: [linux, ssd]
concurrency: 3
stateDir: state
tofu:
  binary: /opt/tofu
  providerMirror: mirror
)";
  takosumi::testing::TempDir tmp_{"takosumi-config-"};
  std::filesystem::path dir_ = tmp_.path();
};

TEST_F(AgentConfigTest, LoadsAndResolvesRelativePaths) {
  auto c = load(kValid);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->control_url, "http://127.0.0.1:9000");
  EXPECT_EQ(c->control_signing_key, dir_ / "control.pub");
  EXPECT_EQ(c->pool_token.reveal_as_string(), "pool-secret");
  EXPECT_EQ(c->concurrency, 3);
  EXPECT_EQ(c->labels.size(), 2u);
  EXPECT_EQ(c->state_dir, dir_ / "state");
  EXPECT_EQ(c->tofu_binary, "/opt/tofu");
  EXPECT_EQ(c->provider_mirror, dir_ / "mirror");
}

TEST_F(AgentConfigTest, EnvironmentOverridesUrlAndToken) {
  auto c = load(kValid, {{"TAKOSUMI_DEPLOY_CONTROL_URL", "http://10.0.0.1:1"},
                         {"TAKOSUMI_POOL_TOKEN", "from-env"}});
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->control_url, "http://10.0.0.1:1");
  EXPECT_EQ(c->pool_token.reveal_as_string(), "from-env");
}

TEST_F(AgentConfigTest, ReplicasAreAListOfUrlsTriedInOrder) {
  std::string yaml = kValid;
  yaml.replace(yaml.find("  url: http://127.0.0.1:9000"), 28,
               "  urls: [https://cp-a.example:8443, https://cp-b.example:8443]");
  auto c = load(yaml);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->control_urls,
            (std::vector<std::string>{"https://cp-a.example:8443", "https://cp-b.example:8443"}));
  EXPECT_EQ(c->control_url, "https://cp-a.example:8443");
  auto both = load(std::string(kValid).replace(std::string(kValid).find("  signingPublicKeyFile"), 0,
                                               "  urls: [https://cp-b.example:8443]\n"));
  ASSERT_FALSE(both);
  EXPECT_NE(both.error().message.find("not both"), std::string::npos) << both.error().message;
  std::string bad = kValid;
  bad.replace(bad.find("  url: http://127.0.0.1:9000"), 28, "  urls: [https://a:1, cp-b:8443]");
  auto refused = load(bad);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("\"cp-b:8443\" does not"), std::string::npos)
      << refused.error().message;
}

TEST_F(AgentConfigTest, DataLossPatternsAreALists) {
  auto c = load(std::string(kValid) + "dataLossPatterns: [\"*_vault\", local_file]\n");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->data_loss_patterns, (std::vector<std::string>{"*_vault", "local_file"}));
  auto bad = load(std::string(kValid) + "dataLossPatterns: local_file\n");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("dataLossPatterns must be a list"), std::string::npos);
}

TEST_F(AgentConfigTest, TypoInKeyIsNamed) {
  auto c = load(std::string(kValid) + "concurrancy: 2\n");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, errc::kConfigInvalid);
  EXPECT_NE(c.error().message.find("unknown key concurrancy"), std::string::npos);
}

TEST_F(AgentConfigTest, OutOfRangeConcurrencyIsRefused) {
  std::string yaml = kValid;
  yaml.replace(yaml.find("concurrency: 3"), 14, "concurrency: 0");
  auto c = load(yaml);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("concurrency must be between 1 and 64"), std::string::npos);
}

TEST_F(AgentConfigTest, MissingPinnedKeyIsRefused) {
  std::string yaml = kValid;
  yaml.erase(yaml.find("  signingPublicKeyFile"), std::string("  signingPublicKeyFile: control.pub\n").size());
  auto c = load(yaml);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("signingPublicKeyFile is required"), std::string::npos);
}

TEST_F(AgentConfigTest, BrokenYamlReportsLine) {
  auto c = load("name: [unclosed\n");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, errc::kConfigInvalid);
  EXPECT_NE(c.error().message.find("line"), std::string::npos);
}

}  // namespace
}  // namespace takosumi::config

namespace takosumi::config {
namespace {

TEST_F(AgentConfigTest, SandboxIsOnByDefaultAndPoolPolicyDefersToCapsules) {
  auto c = load(kValid);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_TRUE(c->sandbox.enabled);
  EXPECT_EQ(c->sandbox.bubblewrap, "/usr/bin/bwrap");
  EXPECT_TRUE(c->sandbox.network);
  EXPECT_TRUE(c->policy.allow_provisioners);
  EXPECT_TRUE(c->policy.allow_external_data);
  EXPECT_FALSE(c->policy.allowed_providers);
  EXPECT_EQ(c->policy.network, protocol::NetworkMode::full);
  // Every Run is bounded unless the operator says otherwise.
  EXPECT_EQ(c->limits.memory_mib, 2048u);
  EXPECT_EQ(c->limits.workspace_mib, 4096u);
  EXPECT_EQ(c->source.fetch_timeout, std::chrono::seconds(300));
  EXPECT_TRUE(c->source.file_roots.empty()) << "local repositories are off by default";
  EXPECT_FALSE(c->source.allow_loopback_hosts) << "sources never reach this machine by default";
  EXPECT_EQ(c->limits.max_state_bytes, 256u << 20);
  EXPECT_TRUE(c->sandbox.exec_control_required);
  EXPECT_EQ(c->sandbox.exec_allow, (std::vector<std::filesystem::path>{"/bin/sh", "/usr/bin"}));
  EXPECT_FALSE(c->sandbox.tcp_connect_ports);
  EXPECT_EQ(c->limits.tmp_mib, 512u);
  EXPECT_EQ(c->limits.max_processes, 512u);
}

TEST_F(AgentConfigTest, ExecControlPortsAndSandboxLimits) {
  auto c = load(std::string(kValid) +
                "sandbox:\n  execControl: best-effort\n  execAllow: [/usr/bin/python3]\n"
                "  tcpConnectPorts: [443, 8443]\n  confine: bin/takosumi-confine\n"
                "limits:\n  tmpMiB: 64\n  maxProcesses: 0\n  memoryMiB: 0\n  workspaceMiB: 100\n"
                "source:\n  fileRoots: [repos, /srv/git]\n  fetchTimeoutSeconds: 60\n  allowLoopbackHosts: true\n");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_FALSE(c->sandbox.exec_control_required);
  EXPECT_EQ(c->sandbox.exec_allow, std::vector<std::filesystem::path>{"/usr/bin/python3"});
  EXPECT_EQ(c->sandbox.tcp_connect_ports, (std::vector<std::uint16_t>{443, 8443}));
  EXPECT_EQ(c->sandbox.confine, dir_ / "bin/takosumi-confine");
  EXPECT_EQ(c->limits.tmp_mib, 64u);
  EXPECT_EQ(c->limits.max_processes, 0u);
  EXPECT_EQ(c->limits.memory_mib, 0u);
  EXPECT_EQ(c->limits.workspace_mib, 100u);
  EXPECT_EQ(c->source.file_roots, (std::vector<std::filesystem::path>{dir_ / "repos", "/srv/git"}));
  EXPECT_EQ(c->source.fetch_timeout, std::chrono::seconds(60));
  EXPECT_TRUE(c->source.allow_loopback_hosts);
  auto none = load(std::string(kValid) + "sandbox:\n  tcpConnectPorts: []\n  execAllow: []\n");
  ASSERT_TRUE(none) << none.error().message;
  ASSERT_TRUE(none->sandbox.tcp_connect_ports);
  EXPECT_TRUE(none->sandbox.tcp_connect_ports->empty());
  EXPECT_TRUE(none->sandbox.exec_allow.empty());
}

TEST_F(AgentConfigTest, SandboxLimitsAndPolicySections) {
  auto c = load(std::string(kValid) +
                "sandbox:\n  mode: bubblewrap\n  bubblewrap: bin/bwrap\n  network: none\n"
                "  writablePaths: [world]\n"
                "limits:\n  memoryMiB: 2048\n  cpuSeconds: 600\n  maxLogBytes: 65536\n"
                "policy:\n  allowedProviders: [registry.opentofu.org/hashicorp/null]\n"
                "  allowProvisioners: false\n");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->sandbox.bubblewrap, dir_ / "bin/bwrap");
  EXPECT_FALSE(c->sandbox.network);
  EXPECT_EQ(c->sandbox.writable_paths, std::vector<std::filesystem::path>{dir_ / "world"});
  EXPECT_EQ(c->policy.network, protocol::NetworkMode::none);
  EXPECT_EQ(c->limits.memory_mib, 2048u);
  EXPECT_EQ(c->limits.cpu_seconds, 600u);
  EXPECT_EQ(c->limits.max_log_bytes, 65536u);
  ASSERT_TRUE(c->policy.allowed_providers);
  EXPECT_EQ(*c->policy.allowed_providers,
            std::vector<std::string>{"registry.opentofu.org/hashicorp/null"});
  EXPECT_FALSE(c->policy.allow_provisioners);
  EXPECT_TRUE(c->policy.allow_external_data);
}

// A Run may write neither a build of tofu.versionsDir nor a directory above one: renaming a
// parent would put its own build where the next Run chooses.
TEST_F(AgentConfigTest, WritablePathsMustStayClearOfWhatRunsExecute) {
  std::string yaml(kValid);
  yaml.replace(yaml.find("  providerMirror: mirror\n"), 24,
               "  providerMirror: mirror\n  versionsDir: shared/a/versions\n");
  auto nested = load(yaml + "sandbox:\n  writablePaths: [shared]\n");
  ASSERT_FALSE(nested);
  EXPECT_EQ(nested.error().code, errc::kConfigInvalid);
  EXPECT_NE(nested.error().message.find("\"" + (dir_ / "shared").string() +
                                        "\" overlaps tofu.versionsDir"),
            std::string::npos) << nested.error().message;
  EXPECT_FALSE(load(yaml + "sandbox:\n  writablePaths: [shared/a/versions/1.10.6]\n"));
  // Through a link, as the paths are on disk.
  std::filesystem::create_directories(dir_ / "shared/a/versions");
  std::filesystem::create_directory_symlink(dir_ / "shared/a", dir_ / "alias");
  EXPECT_FALSE(load(yaml + "sandbox:\n  writablePaths: [alias]\n"));
  auto apart = load(yaml + "sandbox:\n  writablePaths: [shared/world]\n");
  ASSERT_TRUE(apart) << apart.error().message;
  EXPECT_EQ(apart->tofu_versions_dir, dir_ / "shared/a/versions");
  auto unsandboxed = load(yaml + "sandbox:\n  mode: none\n  writablePaths: [shared]\n");
  EXPECT_TRUE(unsandboxed) << "nothing is written through a sandbox that is not there";
}

TEST_F(AgentConfigTest, SandboxNoneIsAnExplicitChoiceAndBadValuesAreNamed) {
  auto none = load(std::string(kValid) + "sandbox:\n  mode: none\n");
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_FALSE(none->sandbox.enabled);
  for (const auto& [yaml, expected] : std::vector<std::pair<std::string, std::string>>{
           {"sandbox:\n  mode: docker\n", "sandbox.mode must be bubblewrap or none"},
           {"sandbox:\n  network: host\n", "sandbox.network must be default or none"},
           {"sandbox:\n  writablePaths: [/]\n", "would make everything writable"},
           {"sandbox:\n  writablePaths: [.]\n", "overlaps tofu.providerMirror"},
           {"sandbox:\n  writablePaths: [mirror/registry.opentofu.org]\n", "overlaps tofu.providerMirror"},
           {"sandbox:\n  writablePaths: [/opt]\n", "overlaps tofu.binary"},
           {"policy:\n  deniedProviders: [aws]\n", "fully qualified"},
           {"policy:\n  allowProvisioners: maybe\n", "policy.allowProvisioners must be true or false"},
           {"limits:\n  maxLogBytes: 10\n", "limits.maxLogBytes must be between"},
           {"sandbox:\n  execControl: off\n", "sandbox.execControl must be required or best-effort"},
           {"sandbox:\n  execAllow: [bin/sh]\n", "must be an absolute path"},
           {"sandbox:\n  tcpConnectPorts: [https]\n", "\"https\" is not a port number"},
           {"sandbox:\n  tcpConnectPorts: 443\n", "must be a list"},
           {"limits:\n  tmpMiB: 0\n", "limits.tmpMiB must be between"}}) {
    auto c = load(std::string(kValid) + yaml);
    ASSERT_FALSE(c) << yaml;
    EXPECT_EQ(c.error().code, errc::kConfigInvalid);
    EXPECT_NE(c.error().message.find(expected), std::string::npos) << c.error().message;
  }
}

}  // namespace
}  // namespace takosumi::config

namespace takosumi::config {
namespace {

TEST_F(AgentConfigTest, ServiceSettingsAreValidatedWithTheKeyToFix) {
  auto c = load(std::string(kValid) + "logFormat: json\nephemeral: true\n"
                "hooks:\n  prePlan: /bin/true\n  timeoutSeconds: 5\nmetrics:\n  listen: 127.0.0.1:9464\n");
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_EQ(c->log_format, LogFormat::json);
  EXPECT_TRUE(c->ephemeral);
  EXPECT_EQ(c->hooks.pre_plan, "/bin/true");
  EXPECT_TRUE(c->hooks.post_apply.empty());
  EXPECT_EQ(c->hooks.timeout, std::chrono::seconds(5));
  EXPECT_EQ(c->metrics.listen, "127.0.0.1:9464");
  auto defaults = load(kValid);
  ASSERT_TRUE(defaults);
  EXPECT_EQ(defaults->log_format, LogFormat::text);
  EXPECT_EQ(defaults->hooks.timeout, std::chrono::seconds(60));
  EXPECT_TRUE(defaults->metrics.listen.empty()) << "the agent's metrics are off by default";

  for (const auto& [yaml, key] : std::vector<std::pair<std::string, std::string>>{
           {"logLevel: verbose\n", "logLevel"},
           {"logFormat: xml\n", "logFormat"},
           {"hooks:\n  prePlan: relative/hook\n", "hooks.prePlan"},
           {"hooks:\n  postApply: /nonexistent/hook\n", "hooks.postApply"},
           {"hooks:\n  preplan: /bin/true\n", "preplan"},
           {"hooks:\n  timeoutSeconds: 0\n", "hooks.timeoutSeconds"},
           {"metrics:\n  listen: 9464\n", "metrics.listen"}}) {
    auto bad = load(std::string(kValid) + yaml);
    ASSERT_FALSE(bad) << yaml;
    EXPECT_EQ(bad.error().code, errc::kConfigInvalid);
    EXPECT_NE(bad.error().message.find(key), std::string::npos) << bad.error().message;
  }
}

TEST_F(AgentConfigTest, AReloadTakesRunSettingsAndNamesWhatWaitsForARestart) {
  auto running = load(kValid);
  ASSERT_TRUE(running);
  auto fresh = load(std::string(kValid) + "logLevel: debug\nlimits:\n  memoryMiB: 256\n"
                    "hooks:\n  preApply: /bin/true\n");
  ASSERT_TRUE(fresh);
  fresh->concurrency = 5;
  fresh->labels = {"gpu"};
  fresh->name = "worker-2";
  fresh->control_urls = {"https://elsewhere:8443"};
  const auto pending = apply_reload(*running, std::move(*fresh));
  EXPECT_EQ(running->concurrency, 5);
  EXPECT_EQ(running->labels, std::vector<std::string>{"gpu"});
  EXPECT_EQ(running->log_level, "debug");
  EXPECT_EQ(running->limits.memory_mib, 256u);
  EXPECT_EQ(running->hooks.pre_apply, "/bin/true");
  EXPECT_EQ(running->name, "worker-1");
  EXPECT_EQ(running->control_url, "http://127.0.0.1:9000");
  EXPECT_EQ(pending, (std::vector<std::string>{"controlPlane.url(s)", "name"}));
}

}  // namespace
}  // namespace takosumi::config

namespace takosumi::config {
namespace {

TEST_F(AgentConfigTest, AnEmptyOrScalarFileIsAClearErrorNotACrash) {
  for (const char* yaml : {"", "just a string\n", "- a\n- list\n"}) {
    auto c = load(yaml);
    ASSERT_FALSE(c) << yaml;
    EXPECT_EQ(c.error().code, errc::kConfigInvalid);
    EXPECT_NE(c.error().message.find("must be a mapping"), std::string::npos) << c.error().message;
  }
}

}  // namespace
}  // namespace takosumi::config
