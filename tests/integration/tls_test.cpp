// Agent and control plane across TLS with certificates made at test time: a Run goes through over
// mutual TLS; an agent that trusts another CA, meets an expired certificate, names a host the
// certificate is not for, or brings no client certificate each stops with its own code and runs
// nothing; the control plane takes a new certificate on SIGHUP; plain http to an address that is
// not loopback is refused on both sides unless allowed. A certificate is matched by its
// subjectAltNames only (a CN naming the host is not enough), and an agent keeps the client
// certificate identity it registered with.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/stack.hpp"
#include "tests/support/test_git_repo.hpp"
#include "tests/support/test_paths.hpp"

namespace takosumi::testing {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

// Starts agent-<index> with this controlPlane section and expects it to exit with `code` in its
// log; returns the log.
std::string expect_refused(Stack& stack, int index, const std::string& section, int exit_code,
                           const std::string& code) {
  stack.set_agent_control_plane(index, section);
  stack.start_agent(index);
  EXPECT_EQ(stack.wait_agent_exit(index, 60s), exit_code) << stack.agent_log(index);
  const std::string log = stack.agent_log(index);
  EXPECT_NE(log.find(code), std::string::npos) << log;
  EXPECT_EQ(log.find("registered with http"), std::string::npos) << log;
  return log;
}

std::string files_yaml(const net::TlsClientFiles& f, bool with_client) {
  std::string out = "  caFile: " + f.ca_file.string() + "\n";
  if (with_client)
    out += "  clientCertFile: " + f.cert_file.string() + "\n  clientKeyFile: " +
           f.key_file.string() + "\n";
  return out;
}

bool reloaded(const Stack& stack, std::size_t times) {
  return eventually(
      [&] {
        const std::string log = stack.control_log();
        std::size_t n = 0;
        for (auto at = log.find("TLS certificate and key reloaded"); at != std::string::npos;
             at = log.find("TLS certificate and key reloaded", at + 1))
          ++n;
        return n >= times;
      },
      30s);
}

TEST(Tls, ARunGoesThroughMutualTlsAndEveryBrokenHandshakeStopsTheAgentWithItsCode) {
  StackOptions options;
  options.agents = 0;
  options.https = true;
  options.mutual_tls = true;
  Stack stack(options);
  ASSERT_NE(stack.port(), 0);
  const std::string port = std::to_string(stack.port());
  const std::string url = "controlPlane:\n  url: https://localhost:" + port + "\n";
  const auto good = stack.client_certificate("agent-spare");

  // A plan waits in the queue while the broken agents try: none of them may take it.
  TestGitRepo repo(stack.root() / "repo");
  repo.commit({{"main.tf", R"(resource "terraform_data" "x" { input = "a" }
output "greeting" { value = "hello over tls" })"}});
  const auto capsule = stack.create_capsule(
      repo.url(), {}, json::object{{"greeting", json::object{{"from", "greeting"}}}});
  auto queued = stack.api().post("/api/v1/capsules/" + capsule + "/plan", json::object{});
  ASSERT_EQ(queued.status, 201u) << queued.body;
  const std::string plan_id = str(queued.json.as_object(), "id");

  // Another CA.
  TestCa other("another CA");
  other.write_cert(stack.pki_dir() / "other-ca.pem");
  auto wrong_ca = good;
  wrong_ca.ca_file = stack.pki_dir() / "other-ca.pem";
  expect_refused(stack, 1, url + files_yaml(wrong_ca, true), 1, "tls_certificate_invalid");

  // The certificate names localhost, not 127.0.0.1.
  expect_refused(stack, 2,
                 "controlPlane:\n  url: https://127.0.0.1:" + port + "\n" + files_yaml(good, true),
                 1, "tls_hostname_mismatch");

  // No client certificate for a control plane that requires one.
  const auto no_client = expect_refused(stack, 3, url + files_yaml(good, false), 1,
                                        "tls_handshake_failed");
  EXPECT_NE(no_client.find("clientCertFile"), std::string::npos) << no_client;

  // A client certificate from another CA.
  const auto foreign = other.issue({.common_name = "intruder", .server = false, .client = true});
  foreign.write(stack.pki_dir() / "intruder.pem", stack.pki_dir() / "intruder.key");
  expect_refused(stack, 4,
                 url + "  caFile: " + good.ca_file.string() + "\n  clientCertFile: " +
                     (stack.pki_dir() / "intruder.pem").string() + "\n  clientKeyFile: " +
                     (stack.pki_dir() / "intruder.key").string() + "\n",
                 1, "tls_handshake_failed");

  // The control plane's certificate expired: SIGHUP takes the new files, new agents meet it.
  const auto server_pem = stack.pki_dir() / "server.pem";
  const auto server_key = stack.pki_dir() / "server.key";
  std::filesystem::copy_file(server_pem, stack.pki_dir() / "server-good.pem");
  std::filesystem::copy_file(server_key, stack.pki_dir() / "server-good.key");
  stack.ca()
      .issue({.common_name = "localhost", .dns_names = {"localhost"}, .valid_from_days = -30,
              .valid_until_days = -1})
      .write(server_pem, server_key);
  stack.reload_control();
  ASSERT_TRUE(reloaded(stack, 1)) << stack.control_log();
  const auto expired = expect_refused(stack, 5, url + files_yaml(good, true), 1,
                                      "tls_certificate_invalid");
  EXPECT_NE(expired.find("expired"), std::string::npos) << expired;

  // A certificate for another DNS name.
  stack.ca()
      .issue({.common_name = "localhost", .dns_names = {"control.example"}})
      .write(server_pem, server_key);
  stack.reload_control();
  ASSERT_TRUE(reloaded(stack, 2)) << stack.control_log();
  expect_refused(stack, 6, url + files_yaml(good, true), 1, "tls_hostname_mismatch");

  // A key that does not belong to the certificate is refused and the pair in use stays.
  std::filesystem::copy_file(stack.pki_dir() / "intruder.key", server_key,
                             std::filesystem::copy_options::overwrite_existing);
  stack.reload_control();
  EXPECT_TRUE(eventually([&] {
    return stack.control_log().find("TLS reload refused") != std::string::npos;
  }, 30s)) << stack.control_log();
  EXPECT_NE(stack.control_log().find("does not belong to the certificate"), std::string::npos)
      << stack.control_log();
  expect_refused(stack, 7, url + files_yaml(good, true), 1, "tls_hostname_mismatch");

  // The good certificate again, and a good agent: the plan and its apply go through over TLS.
  std::filesystem::copy_file(stack.pki_dir() / "server-good.pem", server_pem,
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(stack.pki_dir() / "server-good.key", server_key,
                             std::filesystem::copy_options::overwrite_existing);
  stack.reload_control();
  ASSERT_TRUE(reloaded(stack, 3)) << stack.control_log();
  // Nothing ran meanwhile.
  auto still = stack.api().get("/api/v1/runs/" + plan_id);
  ASSERT_TRUE(still.json.is_object()) << still.error_code << " " << still.body;
  EXPECT_EQ(str(still.json.as_object(), "status"), "queued");
  stack.start_agent(0);
  auto plan = stack.wait_run(plan_id);
  ASSERT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan) << stack.agent_logs();
  auto applied = stack.apply(plan_id);
  ASSERT_EQ(str(applied, "status"), "succeeded") << json::serialize(applied);
  auto outputs = stack.api().get("/api/v1/capsules/" + capsule + "/outputs");
  EXPECT_NE(outputs.body.find("hello over tls"), std::string::npos) << outputs.body;

  // The agent's certificate identity is on record, and it must stay the same.
  auto agents = stack.api().get("/api/v1/agents");
  ASSERT_EQ(agents.status, 200u) << agents.body;
  EXPECT_NE(agents.body.find("\"certificateIdentity\":\"CN=agent-0,O=takosumi tests\""),
            std::string::npos) << agents.body;
  stack.stop_agents();
  const auto before = stack.agent_log(0).size();
  stack.set_agent_control_plane(0, url + files_yaml(stack.client_certificate("impostor"), true));
  stack.start_agent(0);
  EXPECT_EQ(stack.wait_agent_exit(0, 60s), 1);
  const std::string impostor = stack.agent_log(0).substr(before);
  EXPECT_NE(impostor.find("agent_certificate_mismatch"), std::string::npos) << impostor;
  EXPECT_EQ(impostor.find("registered with http"), std::string::npos) << impostor;

  // The public API over mutual TLS needs a client certificate too.
  HttpClient anonymous("localhost", stack.port(), "test-api-token-0123456789",
                       net::TlsClientFiles{good.ca_file, {}, {}});
  auto refused = anonymous.get("/api/v1/workspaces");
  EXPECT_EQ(refused.status, 0u);
  EXPECT_EQ(refused.error_code, "tls_handshake_failed") << refused.body;
}

TEST(Tls, PlainHttpBeyondLoopbackIsRefusedOnBothSidesUnlessAllowed) {
  StackOptions options;
  options.agents = 0;
  Stack stack(options);
  ASSERT_NE(stack.port(), 0);
  // TEST-NET-1: never reached, the agent refuses before connecting.
  const auto log = expect_refused(
      stack, 0, "controlPlane:\n  url: http://192.0.2.10:" + std::to_string(stack.port()) + "\n",
      2, "config_invalid");
  EXPECT_NE(log.find("controlPlane.allowInsecureHttp"), std::string::npos) << log;

  const std::filesystem::path bin = test_paths::binary_dir;
  const auto check = [&](const std::string& extra) {
    const auto file = stack.root() / "open.yaml";
    std::ofstream(file) << "listenAddress: 0.0.0.0\ndataDir: " << (stack.root() / "open").string()
                        << "\napiTokenFile: " << (stack.root() / "api.token").string()
                        << "\npoolTokenFile: " << (stack.root() / "pool.token").string() << "\n"
                        << extra;
    ChildProcess checker({(bin / "controlplane/takosumi-control").string(), "check-config",
                          "--config", file.string()},
                         {}, stack.root() / "check.log");
    return checker.wait(60s);
  };
  EXPECT_NE(check(""), 0);
  EXPECT_NE(read_text(stack.root() / "check.log").find("allowInsecureHttp"), std::string::npos)
      << read_text(stack.root() / "check.log");
  EXPECT_EQ(check("allowInsecureHttp: true\n"), 0) << read_text(stack.root() / "check.log");
}

}  // namespace
}  // namespace takosumi::testing
