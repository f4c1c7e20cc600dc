#include "protocol/source_url.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/failure_codes.hpp"
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
    return check_source_url("file://" + p.string(), SourceRules{r, own, false, "sources"});
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

// The control plane and the agent connect from where they stand: a URL naming the machine itself
// or a metadata service is refused, in every spelling a resolver accepts, unless the operator
// allows loopback hosts (a Git server on this machine).
TEST(SourceUrl, AHostOnLoopbackOrLinkLocalAddressesIsRefusedUnlessAllowed) {
  const SourceRules strict{{}, {}, false, "sources"};
  for (const char* url : {"https://localhost/repo.git", "https://LOCALHOST./repo.git",
                          "https://git.localhost/repo.git", "https://127.0.0.1:8443/repo.git",
                          "https://127.1/repo.git", "https://2130706433/repo.git",
                          "https://0x7f000001/repo.git", "https://0.0.0.0/repo.git",
                          "https://[::1]/repo.git", "https://[::ffff:127.0.0.1]/repo.git",
                          "https://[fe80::1]/repo.git", "https://169.254.169.254/latest/meta-data",
                          "https://[fd00:ec2::254]/repo.git", "ssh://git@127.0.0.1/repo.git",
                          "git@localhost:repo.git", "https://224.0.0.1/repo.git"}) {
    auto checked = check_source_url(url, strict);
    ASSERT_FALSE(checked) << url;
    EXPECT_EQ(checked.error().code, errc::kSourceDenied) << url;
    EXPECT_NE(checked.error().message.find("sources.allowLoopbackHosts"), std::string::npos)
        << checked.error().message;
    EXPECT_TRUE(check_source_url(url, SourceRules{{}, {}, true, "sources"})) << url;
  }
  // Private ranges are where organisations keep their Git servers.
  for (const char* url : {"https://10.0.0.5/repo.git", "https://192.168.1.2/repo.git",
                          "https://[fd12::1]/repo.git", "https://git.example.com/repo.git",
                          "https://localhost.example.com/repo.git"})
    EXPECT_TRUE(check_source_url(url, strict)) << url;
}

TEST(SourceUrl, ShownWithoutCredentials) {
  EXPECT_EQ(display_source_url("https://user:pass@host/repo.git"), "https://host/repo.git");
  EXPECT_EQ(display_source_url("https://tok@host/repo.git"), "https://host/repo.git");
  EXPECT_EQ(display_source_url("ssh://git:pw@host/repo.git"), "ssh://git@host/repo.git");
  EXPECT_EQ(display_source_url("git:pw@host:repo.git"), "git@host:repo.git");
  EXPECT_EQ(display_source_url("https://host/a@b"), "https://host/a@b");
  EXPECT_EQ(display_source_url("git@host:repo.git"), "git@host:repo.git");
  // A password may hold "@" itself: nothing of it shows.
  EXPECT_EQ(display_source_url("git:p@ss@host:org/repo.git"), "git@host:org/repo.git");
  EXPECT_EQ(display_source_url("git@host:org/repo@v1"), "git@host:org/repo@v1");
}

}  // namespace
}  // namespace takosumi::protocol
