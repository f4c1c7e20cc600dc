#include "protocol/source_url.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "protocol/failure_codes.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::protocol {
namespace {

namespace fs = std::filesystem;

TEST(SourceUrl, HttpsSshAndScpLikeUrlsAreAccepted) {
  auto https = parse_source_url("https://git.example.com:8443/org/repo.git");
  ASSERT_TRUE(https) << https.error().to_string();
  EXPECT_EQ(https->scheme, SourceScheme::https);
  EXPECT_EQ(https->host, "git.example.com");
  auto ssh = parse_source_url("ssh://git@git.example.com:2222/org/repo.git");
  ASSERT_TRUE(ssh) << ssh.error().to_string();
  EXPECT_EQ(ssh->scheme, SourceScheme::ssh);
  EXPECT_EQ(ssh->user, "git");
  auto scp = parse_source_url("git@github.com:org/repo.git");
  ASSERT_TRUE(scp) << scp.error().to_string();
  EXPECT_EQ(scp->scheme, SourceScheme::ssh);
  EXPECT_EQ(scp->host, "github.com");
  auto v6 = parse_source_url("https://[::1]:8443/repo.git");
  ASSERT_TRUE(v6) << v6.error().to_string();
  auto file = parse_source_url("file:///srv/repos/app/");
  ASSERT_TRUE(file) << file.error().to_string();
  EXPECT_EQ(file->local_path, "/srv/repos/app");
}

TEST(SourceUrl, CredentialsInTheUrlAreRefusedNamingTheConnectionOfKindGit) {
  for (const char* url : {"https://user:pass@git.example.com/repo.git",
                          "https://ghp_token@git.example.com/repo.git",
                          "ssh://git:secret@git.example.com/repo.git",
                          "git:secret@git.example.com:repo.git"}) {
    auto parsed = parse_source_url(url);
    ASSERT_FALSE(parsed) << url;
    EXPECT_EQ(parsed.error().code, errc::kSourceDenied);
    EXPECT_NE(parsed.error().message.find("Connection of kind git"), std::string::npos)
        << parsed.error().message;
    for (const char* leaked : {"secret", ":pass", "ghp_token"})
      EXPECT_EQ(parsed.error().message.find(leaked), std::string::npos) << parsed.error().message;
  }
}

TEST(SourceUrl, OtherSchemesAndLocalPathsAreRefusedSayingWhatIsAllowed) {
  for (const char* url : {"http://git.example.com/repo.git", "git://git.example.com/repo.git",
                          "/srv/repos/private-a", "./repo", "../other", "~/repo",
                          "ext::sh -c touch% /tmp/x", "file://host/srv/repo", "file:///srv/../etc",
                          "file:///srv/%2e%2e/etc", "file:///srv/./repo", "ftp://x/y",
                          "https://git.example.com", "https://-oProxyCommand=x/repo",
                          "https://host:99999/repo", "host:path"}) {
    auto parsed = parse_source_url(url);
    ASSERT_FALSE(parsed) << url;
    EXPECT_EQ(parsed.error().code, errc::kSourceDenied) << url;
  }
  auto bare = parse_source_url("/srv/repos/private-a");
  EXPECT_NE(bare.error().message.find("https://"), std::string::npos) << bare.error().message;
}

TEST(SourceUrl, AFileRepositoryMustLieUnderARootAndOutsideTheProgramsOwnData) {
  takosumi::testing::TempDir dir;
  fs::create_directories(dir / "repos/app");
  fs::create_directories(dir / "state/git-cache/x.git");
  fs::create_directories(dir / "elsewhere/private");
  fs::create_symlink(dir / "elsewhere/private", dir / "repos/escape");
  const std::vector<fs::path> roots{dir / "repos"}, own{dir / "state"};
  const auto check = [&](const fs::path& p, const std::vector<fs::path>& r) {
    return check_source_url("file://" + p.string(), r, own, "sources.fileRoots");
  };
  EXPECT_TRUE(check(dir / "repos/app", roots));
  // Refused alike whether the path exists or not: nothing is learnt about the host's files.
  auto off = check(dir / "repos/app", {});
  ASSERT_FALSE(off);
  EXPECT_NE(off.error().message.find("sources.fileRoots (none are listed"), std::string::npos)
      << off.error().message;
  auto missing = check(dir / "elsewhere/missing", roots);
  auto present = check(dir / "elsewhere/private", roots);
  ASSERT_FALSE(missing);
  ASSERT_FALSE(present);
  EXPECT_EQ(missing.error().message.substr(missing.error().message.find(" is not under")),
            present.error().message.substr(present.error().message.find(" is not under")));
  EXPECT_FALSE(check(dir / "repos/escape", roots)) << "a link out of the root leads out of it";
  // A root that holds the program's own data still never serves it.
  EXPECT_FALSE(check(dir / "state/git-cache/x.git", {dir.path()}));
  EXPECT_FALSE(check(dir.path(), {dir.path()})) << "a repository path above the program's data holds it";
}

TEST(SourceUrl, ShownWithoutCredentials) {
  EXPECT_EQ(display_source_url("https://user:pass@host/repo.git"), "https://host/repo.git");
  EXPECT_EQ(display_source_url("https://tok@host/repo.git"), "https://host/repo.git");
  EXPECT_EQ(display_source_url("ssh://git:pw@host/repo.git"), "ssh://git@host/repo.git");
  EXPECT_EQ(display_source_url("git:pw@host:repo.git"), "git@host:repo.git");
  EXPECT_EQ(display_source_url("https://host/a@b"), "https://host/a@b");
  EXPECT_EQ(display_source_url("git@host:repo.git"), "git@host:repo.git");
}

}  // namespace
}  // namespace takosumi::protocol
