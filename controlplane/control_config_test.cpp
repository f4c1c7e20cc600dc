#include "controlplane/control_config.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "common/error_codes.hpp"
#include "controlplane/testing/test_support.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::controlplane {
namespace {

using takosumi::testing::TempDir;
Result<ControlConfig> parse(const std::string& yaml, std::optional<std::string> env = "env-token",
                            const std::filesystem::path& base = "/base") {
  return parse_control_config(YAML::Load(yaml), base, env);
}

void expect_config_error(const std::string& yaml, const std::string& fragment,
                         std::optional<std::string> env = "env-token") {
  auto r = parse(yaml, env);
  ASSERT_FALSE(r) << yaml;
  EXPECT_EQ(r.error().code, errc::kConfigInvalid);
  EXPECT_NE(r.error().message.find(fragment), std::string::npos) << r.error().message;
}

TEST(ControlConfig, AppliesDefaults) {
  auto r = parse("dataDir: data\npoolTokens: [p1, p2]\n");
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->listen_address, "127.0.0.1");
  EXPECT_EQ(r->port, 0);
  EXPECT_EQ(r->data_dir, std::filesystem::path("/base/data"));
  EXPECT_EQ(r->api_token.reveal_as_string(), "env-token");
  EXPECT_EQ(r->pool_tokens.size(), 2u);
  EXPECT_EQ(r->lease_seconds, 60);
  EXPECT_EQ(r->manifest_ttl_seconds, 900);
  EXPECT_EQ(r->max_connections, 256u);
  EXPECT_EQ(r->max_connections_per_client, 64u);
  EXPECT_EQ(r->header_timeout_seconds, 10);
  EXPECT_EQ(r->max_temp_bytes, 2048ull << 20);
}

TEST(ControlConfig, ReadsAndChecksTheLimits) {
  auto r = parse("dataDir: d\npoolTokens: [p]\nmaxConnections: 32\nmaxTempMiB: 512\n"
                 "maxConnectionsPerClient: 4\nheaderTimeoutSeconds: 3\n");
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->max_connections, 32u);
  EXPECT_EQ(r->max_connections_per_client, 4u);
  EXPECT_EQ(r->header_timeout_seconds, 3);
  EXPECT_EQ(r->max_temp_bytes, 512ull << 20);
  expect_config_error("dataDir: d\npoolTokens: [p]\nmaxConnectionsPerClient: 0\n",
                      "maxConnectionsPerClient must be between 1 and 65536");
  expect_config_error("dataDir: d\npoolTokens: [p]\nheaderTimeoutSeconds: 0\n",
                      "headerTimeoutSeconds must be between 1 and 300");
  expect_config_error("dataDir: d\npoolTokens: [p]\nmaxConnections: 0\n",
                      "maxConnections must be between 8 and 65536");
  expect_config_error("dataDir: d\npoolTokens: [p]\nmaxTempMiB: 100\n",
                      "maxTempMiB must be between 256");
  expect_config_error("dataDir: d\npoolTokens: [p]\nmaxTempMb: 300\n", "unknown key maxTempMb");
}

TEST(ControlConfig, ReadsTokenFiles) {
  TempDir dir;
  std::ofstream(dir.path() / "api.token") << "  api-secret \n";
  std::ofstream(dir.path() / "pool.token") << "# pool tokens\npool-a\n\npool-b\n";
  auto r = parse("dataDir: /d\nport: 8123\napiTokenFile: api.token\npoolTokenFile: pool.token\n"
                 "leaseSeconds: 30\nmanifestTtlSeconds: 120\n",
                 std::nullopt, dir.path());
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->port, 8123);
  EXPECT_EQ(r->api_token.reveal_as_string(), "api-secret");
  ASSERT_EQ(r->pool_tokens.size(), 2u);
  EXPECT_EQ(r->pool_tokens[1].reveal_as_string(), "pool-b");
  EXPECT_EQ(r->lease_seconds, 30);
}

TEST(ControlConfig, ReadsTheStore) {
  auto sqlite = parse("dataDir: d\npoolTokens: [p]\n");
  ASSERT_TRUE(sqlite);
  EXPECT_EQ(sqlite->store_driver, StoreDriver::sqlite);
  auto pg = parse("dataDir: d\npoolTokens: [p]\nstore:\n  driver: postgres\n"
                  "  url: postgresql://takosumi@db:5432/takosumi?sslmode=verify-full\n"
                  "  passwordFile: secrets/db.password\n");
  ASSERT_TRUE(pg) << pg.error().to_string();
  EXPECT_EQ(pg->store_driver, StoreDriver::postgres);
  EXPECT_EQ(pg->postgres.url, "postgresql://takosumi@db:5432/takosumi?sslmode=verify-full");
  EXPECT_EQ(pg->postgres.password_file, std::filesystem::path("/base/secrets/db.password"));
  expect_config_error("dataDir: d\npoolTokens: [p]\nstore:\n  driver: mysql\n",
                      "store.driver must be sqlite or postgres");
  expect_config_error("dataDir: d\npoolTokens: [p]\nstore:\n  driver: postgres\n",
                      "store.url must be a postgresql:// URI");
  expect_config_error("dataDir: d\npoolTokens: [p]\nstore:\n  driver: postgres\n  url: db:5432\n",
                      "store.url must be a postgresql:// URI");
  expect_config_error("dataDir: d\npoolTokens: [p]\nstore:\n  url: postgresql://db/x\n",
                      "are for store.driver postgres");
  expect_config_error("dataDir: d\npoolTokens: [p]\nstore:\n  driver: postgres\n  uri: x\n",
                      "uri");
}

TEST(ControlConfig, NamesTheBadKey) {
  expect_config_error("poolTokens: [p]\n", "dataDir is required");
  expect_config_error("dataDir: d\npoolTokens: [p]\nport: 70000\n", "port must be between");
  expect_config_error("dataDir: d\npoolTokens: [p]\nport: http\n", "port must be an integer");
  expect_config_error("dataDir: d\npoolTokens: [p]\nleaseSecond: 5\n", "unknown key leaseSecond");
  expect_config_error("dataDir: d\npoolTokens: p\n", "poolTokens must be a list");
  expect_config_error("dataDir: d\n", "poolTokens: at least one");
  expect_config_error("dataDir: d\npoolTokens: [p]\n", "apiTokenFile", std::nullopt);
  expect_config_error("dataDir: d\npoolTokens: [p]\napiTokenFile: /nonexistent/t\n", "apiTokenFile",
                      std::nullopt);
}

TEST(ControlConfig, LoadsAFileWithLineNumbersOnSyntaxErrors) {
  TempDir dir;
  std::ofstream(dir.path() / "bad.yaml") << "dataDir: [unclosed\n";
  auto r = load_control_config(dir.path() / "bad.yaml", "t");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, errc::kConfigInvalid);
  EXPECT_NE(r.error().message.find("line"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace takosumi::controlplane
