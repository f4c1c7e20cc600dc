#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"
#include "runner/state/run_workspace.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;
using takosumi::testing::TempDir;

// The sandboxed module can leave links and FIFOs in its workspace; the agent reads nothing
// through them after tofu exits.
TEST(RunWorkspace, ReadsOnlyRegularFilesInsideItself) {
  TempDir dir("ws-");
  auto ws = RunWorkspace::create(dir.path() / "work", "run_1", 1);
  ASSERT_TRUE(ws) << ws.error().to_string();
  const fs::path other = dir.path() / "work" / "run_2-1" / "terraform.tfstate";
  fs::create_directories(other.parent_path());
  std::ofstream(other) << "another Run's state";
  fs::create_directories(ws->source());
  std::ofstream(ws->source() / "terraform.tfstate") << "{}";

  EXPECT_TRUE(ws->check_regular_file(ws->source() / "terraform.tfstate"));
  fs::create_symlink(ws->source() / "terraform.tfstate", ws->source() / "inner-link");
  EXPECT_TRUE(ws->check_regular_file(ws->source() / "inner-link")) << "a link within is harmless";

  fs::create_symlink(other, ws->source() / "stolen.tfstate");
  auto stolen = ws->check_regular_file(ws->source() / "stolen.tfstate");
  ASSERT_FALSE(stolen);
  EXPECT_EQ(stolen.error().code, errc::kWorkspaceFailed);
  EXPECT_NE(stolen.error().message.find("outside the Run's workspace"), std::string::npos);

  fs::create_directory_symlink(other.parent_path(), ws->source() / "dir-link");
  EXPECT_FALSE(ws->check_regular_file(ws->source() / "dir-link" / "terraform.tfstate"));

  ASSERT_EQ(::mkfifo((ws->source() / "fifo").c_str(), 0600), 0);
  auto fifo = ws->check_regular_file(ws->source() / "fifo");
  ASSERT_FALSE(fifo);
  EXPECT_NE(fifo.error().message.find("not a regular file"), std::string::npos);
  EXPECT_FALSE(ws->check_regular_file(ws->source() / "missing"));
}

// The plan tofu wrote is copied out to the agent's directory; the copy is exactly its bytes, and
// what a module could have put there instead (a link, a FIFO, a file too large) is refused.
TEST(RunWorkspace, FreezesAPlanIntoTheAgentDirectoryAndRefusesWhatIsNotAPlainFile) {
  TempDir dir("ws-");
  auto ws = RunWorkspace::create(dir.path() / "work", "run_1", 1);
  ASSERT_TRUE(ws) << ws.error().to_string();
  EXPECT_TRUE(fs::is_directory(ws->agent_dir()));
  const std::string bytes(100000, 'p');
  std::ofstream(ws->plan_file()) << bytes;
  std::ofstream(ws->frozen_plan()) << "an older copy";
  ASSERT_TRUE(ws->freeze(ws->plan_file(), ws->frozen_plan(), 1 << 20));
  std::ifstream in(ws->frozen_plan());
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), bytes);
  EXPECT_EQ(fs::status(ws->frozen_plan()).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);

  auto large = ws->freeze(ws->plan_file(), ws->frozen_plan(), 1000);
  ASSERT_FALSE(large);
  EXPECT_EQ(large.error().code, errc::kLimitExceeded);

  fs::remove(ws->plan_file());
  const fs::path outside = dir.path() / "outside.tfplan";
  std::ofstream(outside) << "not this Run's";
  fs::create_symlink(outside, ws->plan_file());
  EXPECT_FALSE(ws->freeze(ws->plan_file(), ws->frozen_plan(), 1 << 20));
  fs::remove(ws->plan_file());
  std::ofstream(ws->root() / "real.tfplan") << "inside";
  fs::create_symlink(ws->root() / "real.tfplan", ws->plan_file());
  EXPECT_FALSE(ws->freeze(ws->plan_file(), ws->frozen_plan(), 1 << 20)) << "even a link within";
  fs::remove(ws->plan_file());
  ASSERT_EQ(::mkfifo(ws->plan_file().c_str(), 0600), 0);
  EXPECT_FALSE(ws->freeze(ws->plan_file(), ws->frozen_plan(), 1 << 20));
}

}  // namespace
}  // namespace takosumi::runner
