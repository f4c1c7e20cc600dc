#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"
#include "runner/state/run_credentials.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;
using takosumi::testing::TempDir;
constexpr const char* kNull = "registry.opentofu.org/hashicorp/null";
constexpr const char* kAws = "registry.opentofu.org/hashicorp/aws";

protocol::SecretBundle bundle() {
  protocol::SecretBundle b;
  protocol::ConnectionSecret env;
  env.id = "conn_env";
  env.name = "env";
  env.provider = kNull;
  env.values.emplace("API_TOKEN", SecretBytes::from_string("token-value-1"));
  b.connections.push_back(std::move(env));
  protocol::ConnectionSecret files;
  files.id = "conn_files";
  files.name = "files";
  files.provider = kNull;
  files.mode = protocol::AuthMode::files;
  files.values.emplace("SERVICE_ACCOUNT_FILE", SecretBytes::from_string("{\"key\":\"file-value\"}"));
  b.connections.push_back(std::move(files));
  protocol::ConnectionSecret unused;
  unused.id = "conn_aws";
  unused.name = "aws";
  unused.provider = kAws;
  unused.values.emplace("AWS_SECRET_ACCESS_KEY", SecretBytes::from_string("aws-secret-value"));
  b.connections.push_back(std::move(unused));
  b.sensitive_variables.emplace("db_password", SecretBytes::from_string("db-password-value"));
  return b;
}

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(RunCredentials, InjectsOnlyConnectionsOfLockedProviders) {
  TempDir dir("creds-");
  auto creds = RunCredentials::prepare(bundle(), {kNull}, dir.path() / "credentials");
  ASSERT_TRUE(creds) << creds.error().to_string();
  const auto plan = creds->plan_environment();
  const auto apply = creds->apply_environment();
  EXPECT_TRUE(has(plan, "API_TOKEN=token-value-1"));
  EXPECT_TRUE(has(plan, "TF_VAR_db_password=db-password-value"));
  EXPECT_TRUE(has(apply, "API_TOKEN=token-value-1"));
  EXPECT_FALSE(has(apply, "TF_VAR_db_password=db-password-value"))
      << "an apply takes variables from the saved plan";
  for (const auto& e : plan) EXPECT_EQ(e.find("aws-secret-value"), std::string::npos);
  EXPECT_EQ(creds->skipped(), (std::vector<std::string>{"aws (" + std::string(kAws) + ")"}));
  EXPECT_EQ(creds->names(), (std::vector<std::string>{"API_TOKEN", "SERVICE_ACCOUNT_FILE",
                                                      "TF_VAR_db_password"}));
}

TEST(RunCredentials, FileCredentialsAre0400In0700AndWipedToNothing) {
  TempDir dir("creds-");
  const auto root = dir.path() / "credentials";
  auto creds = RunCredentials::prepare(bundle(), {kNull}, root);
  ASSERT_TRUE(creds) << creds.error().to_string();
  const auto file = root / "conn_files" / "SERVICE_ACCOUNT_FILE";
  EXPECT_TRUE(has(creds->plan_environment(), "SERVICE_ACCOUNT_FILE=" + file.string()));
  EXPECT_EQ(mode_of(root), 0700u);
  EXPECT_EQ(mode_of(root / "conn_files"), 0700u);
  EXPECT_EQ(mode_of(file), 0400u);
  std::ifstream in(file);
  std::string content((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(content, "{\"key\":\"file-value\"}");

  RunCredentials moved = std::move(*creds);
  EXPECT_TRUE(fs::exists(file)) << "a moved-from object must not wipe the new owner's files";
  ASSERT_TRUE(moved.wipe());
  EXPECT_FALSE(fs::exists(root));
  EXPECT_TRUE(moved.plan_environment().empty());
}

TEST(RunCredentials, RefusesReservedNamesEvenFromTheControlPlane) {
  TempDir dir("creds-");
  auto b = bundle();
  b.connections[0].values.emplace("LD_PRELOAD", SecretBytes::from_string("/tmp/evil.so"));
  auto creds = RunCredentials::prepare(b, {kNull}, dir.path() / "credentials");
  ASSERT_FALSE(creds);
  EXPECT_EQ(creds.error().code, errc::kManifestInvalid);
  EXPECT_NE(creds.error().message.find("LD_PRELOAD"), std::string::npos);
}

TEST(RunCredentials, RefusesAConnectionIdThatIsNotAFileName) {
  TempDir dir("creds-");
  auto b = bundle();
  b.connections[1].id = "../escape";
  auto creds = RunCredentials::prepare(b, {kNull}, dir.path() / "credentials");
  ASSERT_FALSE(creds);
  EXPECT_EQ(creds.error().code, errc::kManifestInvalid);
  EXPECT_FALSE(fs::exists(dir.path() / "escape"));
}

}  // namespace
}  // namespace takosumi::runner
