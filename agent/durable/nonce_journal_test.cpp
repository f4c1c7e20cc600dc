#include "agent/durable/nonce_journal.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "common/clock.hpp"
#include "protocol/signed_manifest.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/fake_clock.hpp"
#include "tests/support/test_manifest.hpp"

using takosumi::testing::FakeClock;

namespace takosumi::agent {
namespace {

using takosumi::testing::TempDir;
using Entries = std::vector<std::pair<std::string, std::int64_t>>;

TEST(NonceJournal, KeepsLiveNoncesAcrossReopenAndDropsExpiredAndTornLines) {
  TempDir dir("nonces-");
  const auto file = dir.path() / "nonces";
  {
    auto journal = NonceJournal::open(file, 100);
    ASSERT_TRUE(journal) << journal.error().to_string();
    ASSERT_TRUE(journal->record("n-live", 500, 100));
    ASSERT_TRUE(journal->record("n-old", 150, 100));
  }
  std::ofstream(file, std::ios::app) << "300 n-torn-without-newline";
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  auto reopened = NonceJournal::open(file, 200);
  ASSERT_TRUE(reopened) << reopened.error().to_string();
  EXPECT_EQ(reopened->entries(), (Entries{{"n-live", 500}}));
  auto again = NonceJournal::open(file, 200);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->entries(), (Entries{{"n-live", 500}})) << "the rewrite kept only live lines";
  EXPECT_FALSE(again->record("two words", 900, 200));
  EXPECT_FALSE(again->record("", 900, 200));
}

// A manifest accepted before a restart is refused after it, while it has not expired.
TEST(NonceJournal, ARunningAgentsJournalStaysAsSmallAsItsLiveNonces) {
  TempDir dir("nonces-");
  const auto file = dir.path() / "nonces";
  auto journal = NonceJournal::open(file, 0);
  ASSERT_TRUE(journal) << journal.error().to_string();
  // 3,000 Runs, one a second, each manifest valid for 5 minutes: several compactions.
  for (std::int64_t t = 1; t <= 3000; ++t)
    ASSERT_TRUE(journal->record("n-" + std::to_string(t), t + 300, t));
  EXPECT_LE(journal->lines_on_disk(), 2 * 300u + 64u);
  EXPECT_LE(journal->entries().size(), 300u);
  std::ifstream in(file);
  std::size_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_EQ(lines, journal->lines_on_disk());
  // Nothing live was lost on the way.
  auto reopened = NonceJournal::open(file, 3000);
  ASSERT_TRUE(reopened);
  EXPECT_EQ(reopened->entries().size(), 300u);
  EXPECT_EQ(reopened->entries().back(), (std::pair<std::string, std::int64_t>{"n-3000", 3300}));
}

TEST(NonceJournal, AReplayAfterARestartIsRefused) {
  TempDir dir("nonces-");
  const auto file = dir.path() / "nonces";
  FakeClock clock(1000);
  auto control = crypto::SignKeyPair::generate();
  auto m = testing::test_manifest("run_1", protocol::RunType::plan,
                                  {"file:///repo", std::string(40, 'a'), ""});
  m.agent_id = "agt_1";
  m.issued_at = 1000;
  m.expires_at = 1900;
  m.nonce = "nonce-1";
  const auto signed_manifest = protocol::sign_manifest(m, control);

  auto start_agent = [&](NonceJournal& journal) {
    auto verifier = std::make_unique<protocol::ManifestVerifier>(control.public_key, "agt_1", clock);
    for (const auto& [nonce, expires] : journal.entries()) verifier->remember(nonce, expires);
    verifier->set_recorder([&journal](const std::string& n, std::int64_t e) { return journal.record(n, e, 0); });
    return verifier;
  };
  {
    auto journal = NonceJournal::open(file, clock.now_unix());
    ASSERT_TRUE(journal);
    auto verifier = start_agent(*journal);
    EXPECT_TRUE(verifier->verify(signed_manifest));
  }
  clock.advance(60);
  auto journal = NonceJournal::open(file, clock.now_unix());
  ASSERT_TRUE(journal);
  auto restarted = start_agent(*journal);
  auto replay = restarted->verify(signed_manifest);
  ASSERT_FALSE(replay);
  EXPECT_EQ(replay.error().code, "manifest_replayed");
}

}  // namespace
}  // namespace takosumi::agent
