#include "common/file_lock.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <optional>
#include <thread>

#include "common/error_codes.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi {
namespace {

class FileLockTest : public ::testing::Test {
 protected:
  takosumi::testing::TempDir tmp_{"takosumi-lock-"};
  std::filesystem::path file_ = tmp_.path() / "the.lock";
};

TEST_F(FileLockTest, ASecondLockOnTheFileIsRefusedUntilTheFirstIsGone) {
  auto first = FileLock::try_acquire(file_);
  ASSERT_TRUE(first) << first.error().to_string();
  EXPECT_EQ(first->file(), file_);
  EXPECT_TRUE(is_file_locked(file_));

  auto second = FileLock::try_acquire(file_);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code, errc::kConflict);
  EXPECT_NE(second.error().message.find(file_.string()), std::string::npos);

  std::optional<FileLock> held(std::move(*first));
  held.reset();
  EXPECT_FALSE(is_file_locked(file_));
  EXPECT_TRUE(FileLock::try_acquire(file_));
}

TEST_F(FileLockTest, TheLockFileIsPrivate) {
  ASSERT_TRUE(FileLock::try_acquire(file_));
  struct stat st {};
  ASSERT_EQ(::stat(file_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(FileLockTest, AMovedLockStaysHeld) {
  auto first = FileLock::try_acquire(file_);
  ASSERT_TRUE(first);
  FileLock moved = std::move(*first);
  EXPECT_TRUE(is_file_locked(file_));
  EXPECT_EQ(FileLock::try_acquire(file_).error().code, errc::kConflict);
}

TEST_F(FileLockTest, AcquireWaitsForTheHolder) {
  auto first = FileLock::try_acquire(file_);
  ASSERT_TRUE(first);
  std::optional<FileLock> held(std::move(*first));
  std::atomic<bool> released = false;
  bool saw_release = false;
  std::thread waiter([&] {
    auto second = FileLock::acquire(file_);
    // flock can grant it only after the holder's descriptor is closed, which follows the store.
    saw_release = second && released.load();
  });
  released = true;
  held.reset();
  waiter.join();
  EXPECT_TRUE(saw_release);
}

TEST_F(FileLockTest, ProbingAMissingFileCreatesNothing) {
  EXPECT_FALSE(is_file_locked(file_));
  EXPECT_FALSE(std::filesystem::exists(file_));
}

TEST_F(FileLockTest, ASymlinkIsNotFollowed) {
  const auto target = tmp_.path() / "target";
  std::filesystem::create_symlink(target, file_);
  auto lock = FileLock::try_acquire(file_);
  ASSERT_FALSE(lock);
  EXPECT_EQ(lock.error().code, errc::kIoError);
  EXPECT_EQ(lock.error().message.rfind("open lock " + file_.string() + ": ", 0), 0u)
      << lock.error().message;
  EXPECT_FALSE(std::filesystem::exists(target));
}

}  // namespace
}  // namespace takosumi
