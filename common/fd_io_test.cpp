#include "common/fd_io.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <string>
#include <thread>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "tests/support/temp_dir.hpp"

namespace takosumi {
namespace {

struct Pipe {
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) == 0) read = UniqueFd(fds[0]), write = UniqueFd(fds[1]);
  }
  UniqueFd read, write;
};

std::string pattern(std::size_t size) {
  std::string out(size, '\0');
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<char>('a' + i % 23);
  return out;
}

TEST(FdIo, WriteAllPushesMoreThanAPipeHoldsToAReader) {
  Pipe pipe;
  ASSERT_TRUE(pipe.read.valid());
  // Many times the pipe's buffer (64 KiB by default): write(2) returns short counts and blocks.
  const std::string sent = pattern(4 * 1024 * 1024 + 17);
  Result<std::string> received;
  std::thread reader([&] { received = read_all(pipe.read.get(), sent.size(), "pipe"); });
  const auto written = write_all(pipe.write.get(), sent, "pipe");
  pipe.write.reset();  // end of file for the reader
  reader.join();
  ASSERT_TRUE(written) << written.error().to_string();
  ASSERT_TRUE(received) << received.error().to_string();
  EXPECT_TRUE(*received == sent);
}

TEST(FdIo, ReadFullIsShortOnlyAtEndOfFile) {
  Pipe pipe;
  ASSERT_TRUE(pipe.read.valid());
  // Three separate writes: read_full gathers them, however the reader is scheduled.
  std::thread writer([&] {
    for (const char* part : {"0123456789", "abcdefghij", "KLMNOPQRST"})
      (void)write_all(pipe.write.get(), std::string_view(part), "pipe");
    (void)write_all(pipe.write.get(), std::string_view("xyz"), "pipe");
    pipe.write.reset();
  });
  std::array<std::uint8_t, 30> buf{};
  auto first = read_full(pipe.read.get(), buf, "pipe");
  writer.join();
  ASSERT_TRUE(first) << first.error().to_string();
  EXPECT_EQ(*first, 30u);
  EXPECT_EQ(std::string(buf.begin(), buf.end()), "0123456789abcdefghijKLMNOPQRST");
  auto rest = read_full(pipe.read.get(), buf, "pipe");
  ASSERT_TRUE(rest);
  EXPECT_EQ(*rest, 3u);
  auto after = read_full(pipe.read.get(), buf, "pipe");
  ASSERT_TRUE(after);
  EXPECT_EQ(*after, 0u);
}

class FdIoFileTest : public ::testing::Test {
 protected:
  std::filesystem::path file(const std::string& content) {
    const auto path = tmp_.path() / "file";
    EXPECT_TRUE(write_file_atomic(path, content));
    return path;
  }
  takosumi::testing::TempDir tmp_{"takosumi-fdio-"};
};

TEST_F(FdIoFileTest, ReadAllStopsPastTheLimitAndNamesTheFile) {
  const auto path = file(pattern(100 * 1024));
  const UniqueFd exact(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  auto whole = read_all(exact.get(), 100 * 1024, path);
  ASSERT_TRUE(whole) << whole.error().to_string();
  EXPECT_EQ(whole->size(), 100u * 1024);

  const UniqueFd over(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  auto refused = read_all(over.get(), 100 * 1024 - 1, path);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::kPayloadTooLarge);
  EXPECT_NE(refused.error().message.find(path.string()), std::string::npos);
}

TEST_F(FdIoFileTest, ErrnoBecomesAnIoErrorNamingTheFile) {
  const auto path = file("read only");
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  auto written = write_all(fd.get(), std::string_view("x"), path);
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().code, errc::kIoError);
  EXPECT_EQ(written.error().message.rfind("write " + path.string() + ": ", 0), 0u)
      << written.error().message;
}

TEST_F(FdIoFileTest, CloseCheckedClosesTheDescriptor) {
  const auto path = file("");
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  const int raw = fd.get();
  ASSERT_TRUE(close_checked(std::move(fd), path));
  EXPECT_FALSE(fd.valid());  // NOLINT(bugprone-use-after-move): the contract under test
  EXPECT_EQ(::fcntl(raw, F_GETFD), -1);
  EXPECT_TRUE(close_checked(UniqueFd(), path));  // nothing to close
}

}  // namespace
}  // namespace takosumi
