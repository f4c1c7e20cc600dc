#include "agent/durable/run_journal.hpp"

#include <gtest/gtest.h>

#include "agent/durable/run_spool.hpp"
#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::agent {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

JournalEntry entry(std::string run_id, RunPhase phase, std::int64_t at) {
  return JournalEntry{std::move(run_id), 3, "lease-token", phase, R"({"runId":"x"})", "", at};
}

TEST(RunJournalTest, EntriesSurviveAReopenAndKeepTheirPhase) {
  TempDir dir;
  {
    auto journal = RunJournal::open(dir / "runs");
    ASSERT_TRUE(journal);
    ASSERT_TRUE(journal->write(entry("run-b", RunPhase::apply, 20)));
    ASSERT_TRUE(journal->write(entry("run-a", RunPhase::claimed, 10)));
    auto held = entry("run-c", RunPhase::lease_lost, 30);
    held.note = "lease_lost: another agent";
    ASSERT_TRUE(journal->write(held));
  }
  auto journal = RunJournal::open(dir / "runs");
  ASSERT_TRUE(journal);
  auto contents = journal->read();
  ASSERT_TRUE(contents) << contents.error().to_string();
  ASSERT_EQ(contents->entries.size(), 3u);
  EXPECT_EQ(contents->entries[0].run_id, "run-a");
  EXPECT_EQ(contents->entries[1].phase, RunPhase::apply);
  EXPECT_EQ(contents->entries[1].lease_token, "lease-token");
  EXPECT_EQ(contents->entries[1].attempt, 3);
  EXPECT_EQ(contents->entries[1].manifest_payload, R"({"runId":"x"})");
  EXPECT_EQ(contents->entries[2].note, "lease_lost: another agent");
  EXPECT_TRUE(is_held_for_operator(contents->entries[2].phase));
  EXPECT_FALSE(is_held_for_operator(contents->entries[1].phase));
}

TEST(RunJournalTest, APhaseRewriteReplacesTheEntryAndRemoveForgetsIt) {
  TempDir dir;
  auto journal = RunJournal::open(dir / "runs");
  ASSERT_TRUE(journal);
  ASSERT_TRUE(journal->write(entry("run-a", RunPhase::claimed, 10)));
  ASSERT_TRUE(journal->write(entry("run-a", RunPhase::deliver, 11)));
  auto contents = journal->read();
  ASSERT_EQ(contents->entries.size(), 1u);
  EXPECT_EQ(contents->entries[0].phase, RunPhase::deliver);
  ASSERT_TRUE(journal->remove("run-a"));
  EXPECT_TRUE(journal->read()->entries.empty());
  EXPECT_TRUE(dir.entries().contains("runs"));
}

TEST(RunJournalTest, UnreadableFilesAreReportedNotDropped) {
  TempDir dir;
  auto journal = RunJournal::open(dir / "runs");
  ASSERT_TRUE(journal);
  ASSERT_TRUE(journal->write(entry("run-a", RunPhase::apply, 10)));
  ASSERT_TRUE(write_file_atomic(dir / "runs/run-b.json", "{\"runId\":"));
  ASSERT_TRUE(write_file_atomic(dir / "runs/run-c.json",
                                R"({"runId":"run-c","attempt":1,"leaseToken":"t","phase":"dancing",)"
                                R"("manifest":"{}","updatedAt":1})"));
  auto contents = journal->read();
  ASSERT_TRUE(contents);
  EXPECT_EQ(contents->entries.size(), 1u);
  ASSERT_EQ(contents->unreadable.size(), 2u);
  EXPECT_TRUE(fs::exists(dir / "runs/run-b.json")) << "left for the operator";
}

TEST(RunJournalTest, RefusesARunIdThatIsNotAFileName) {
  TempDir dir;
  auto journal = RunJournal::open(dir / "runs");
  ASSERT_TRUE(journal);
  auto written = journal->write(entry("../escape", RunPhase::claimed, 1));
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().code, errc::kInvalidArgument);
}

TEST(RunSpoolTest, ADeliveryRoundTripsWithItsArtifactsAndLogTail) {
  TempDir dir;
  RunSpool spool(dir / "spool");
  Delivery d;
  d.report.lease_token = "lease";
  d.report.attempt = 2;
  d.report.status = "failed";
  d.report.failure_code = "interrupted";
  d.report.new_state = protocol::NewStateDescriptor{"aa", "bb", 9, "L", 4};
  d.state = spool.dir("run-1", 2) / "run-1-2.state.env";
  d.log_seq = 7;
  d.log_tail = "last line\n";
  ASSERT_TRUE(spool.save("run-1", 2, d));
  auto loaded = spool.load("run-1", 2);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  ASSERT_TRUE(*loaded);
  EXPECT_EQ((*loaded)->report.failure_code, "interrupted");
  EXPECT_EQ((*loaded)->report.new_state->serial, 9);
  EXPECT_EQ((*loaded)->report.new_state->prior_generation, 4);
  EXPECT_EQ((*loaded)->state, d.state);
  EXPECT_FALSE((*loaded)->plan);
  EXPECT_EQ((*loaded)->log_seq, 7);
  EXPECT_EQ((*loaded)->log_tail, "last line\n");
  ASSERT_TRUE(spool.remove("run-1", 2));
  auto gone = spool.load("run-1", 2);
  ASSERT_TRUE(gone);
  EXPECT_FALSE(*gone);
}

TEST(RunSpoolTest, ArtifactsOutsideTheAttemptsSpoolAreRefused) {
  TempDir dir;
  RunSpool spool(dir / "spool");
  Delivery d;
  d.report.status = "failed";
  d.state = dir / "elsewhere.env";
  EXPECT_FALSE(spool.save("run-1", 1, d));
  ASSERT_TRUE(ensure_directory(spool.dir("run-1", 1)));
  ASSERT_TRUE(write_file_atomic(spool.dir("run-1", 1) / "delivery.json",
                                R"({"report":{"leaseToken":"l","attempt":1,"status":"failed"},)"
                                R"("state":"../../x.env","logSeq":0,"logTail":""})"));
  EXPECT_FALSE(spool.load("run-1", 1));
}

}  // namespace
}  // namespace takosumi::agent
