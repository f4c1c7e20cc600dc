#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "common/error_codes.hpp"
#include "runner/run_workspace.hpp"
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

}  // namespace
}  // namespace takosumi::runner
