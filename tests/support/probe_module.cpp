#include "tests/support/probe_module.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace takosumi::testing {
namespace json = boost::json;
namespace fs = std::filesystem;

std::string provisioner_module(const std::string& script, const std::string& extra) {
  return "terraform {\n  required_providers {\n    null = { source = \"hashicorp/null\" }\n  }\n}\n"
         "variable \"paths\" {\n  type    = map(string)\n  default = {}\n}\n"
         "resource \"null_resource\" \"probe\" {\n  provisioner \"local-exec\" {\n"
         "    command = <<-EOT\n" + script + "\n    EOT\n  }\n}\n" + extra;
}

std::string probe_capsule(Stack& stack, TestGitRepo& repo, const json::object& variables,
                          json::object policy) {
  if (!policy.contains("allowProvisioners")) policy["allowProvisioners"] = true;
  return stack.create_capsule_from(json::object{
      {"name", "probe"},
      {"source", json::object{{"gitUrl", repo.url()}, {"ref", "main"}, {"modulePath", ""}}},
      {"outputAllowlist", json::object{}},
      {"variables", variables},
      {"policy", std::move(policy)}});
}

std::string run_logs(const Stack& stack, const json::object& run) {
  return stack.api().get("/api/v1/runs/" + str(run, "id") + "/logs").body;
}

json::object plan_and_apply(Stack& stack, const std::string& capsule) {
  auto plan = stack.plan(capsule);
  EXPECT_EQ(str(plan, "status"), "succeeded") << json::serialize(plan) << stack.agent_logs();
  if (str(plan, "status") != "succeeded") return plan;
  return stack.apply(str(plan, "id"));
}

bool process_running(const std::string& needle) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::ifstream in(e.path() / "cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), {});
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(needle) != std::string::npos && cmdline.find("grep") == std::string::npos)
      return true;
  }
  return false;
}

LoopbackListener::LoopbackListener() {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(::listen(fd_, 16), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
}

LoopbackListener::~LoopbackListener() { ::close(fd_); }

std::string connect_probe(int port) {
  return "if bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(port) +
         "' 2>/dev/null; then echo NETWORK-CONNECTED; else echo NETWORK-REFUSED; fi";
}

}  // namespace takosumi::testing
