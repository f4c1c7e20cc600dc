#include "cli/cli_settings.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "common/error_codes.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::cli {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text, fs::perms mode = fs::perms::owner_read | fs::perms::owner_write) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
  fs::permissions(p, mode);
}

TEST(CliSettingsTest, FlagsBeatTheEnvironmentWhichBeatsTheConfigFile) {
  testing::TempDir dir;
  write(dir.path() / "home/.config/takosumi/config.yaml",
        "url: https://from-file:1\ntoken: file-token\ncaFile: ca.pem\n");
  write(dir.path() / "flag.token", "flag-token\n");
  Environment env{{"HOME", (dir.path() / "home").string()}};
  auto from_file = resolve_settings({}, env);
  ASSERT_TRUE(from_file) << from_file.error().to_string();
  EXPECT_EQ(from_file->url, "https://from-file:1");
  EXPECT_EQ(from_file->token.reveal_as_string(), "file-token");
  EXPECT_EQ(from_file->tls.ca_file, dir.path() / "home/.config/takosumi/ca.pem");

  env["TAKOSUMI_DEPLOY_CONTROL_URL"] = "https://from-env:2";
  env["TAKOSUMI_DEPLOY_CONTROL_TOKEN"] = "env-token";
  auto from_env = resolve_settings({}, env);
  ASSERT_TRUE(from_env);
  EXPECT_EQ(from_env->url, "https://from-env:2");
  EXPECT_EQ(from_env->token.reveal_as_string(), "env-token");

  CommandLineSettings flags;
  flags.url = "https://from-flag:3";
  flags.token_file = dir.path() / "flag.token";
  auto from_flags = resolve_settings(flags, env);
  ASSERT_TRUE(from_flags);
  EXPECT_EQ(from_flags->url, "https://from-flag:3");
  EXPECT_EQ(from_flags->token.reveal_as_string(), "flag-token");
}

TEST(CliSettingsTest, MissingOrExposedSettingsSayWhatToDo) {
  testing::TempDir dir;
  auto none = resolve_settings({}, {{"HOME", (dir.path() / "nobody").string()}});
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("TAKOSUMI_DEPLOY_CONTROL_URL"), std::string::npos);
  auto no_token = resolve_settings({}, {{"HOME", (dir.path() / "nobody").string()},
                                         {"TAKOSUMI_DEPLOY_CONTROL_URL", "https://x:1"}});
  ASSERT_FALSE(no_token);
  EXPECT_NE(no_token.error().message.find("TAKOSUMI_DEPLOY_CONTROL_TOKEN"), std::string::npos);

  write(dir.path() / "home/.config/takosumi/config.yaml", "url: https://x:1\ntoken: t\n",
        fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  auto exposed = resolve_settings({}, {{"HOME", (dir.path() / "home").string()}});
  ASSERT_FALSE(exposed);
  EXPECT_EQ(exposed.error().code, errc::kKeyFileInsecure);

  write(dir.path() / "other.yaml", "url: https://x:1\ntokn: t\n");
  CommandLineSettings flags;
  flags.config_file = dir.path() / "other.yaml";
  auto unknown = resolve_settings(flags, {});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("unknown key \"tokn\""), std::string::npos);
}

}  // namespace
}  // namespace takosumi::cli
