// Who a notification wakes: the longest-waiting poll of each agent pool, not every poll (a
// hundred slots polling made each queued Run cost a hundred claims); a pool's own wake reaches
// only that pool; stop() reaches everyone.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <string>
#include <vector>

#include "controlplane/runs/claim_waiters.hpp"

namespace takosumi::controlplane {
namespace {

class ClaimWaitersTest : public ::testing::Test {
 protected:
  // A poll of `pool` that waits an hour unless woken; records its name when it returns.
  void wait(const std::string& name, const std::string& pool) {
    boost::asio::co_spawn(
        io_,
        [this, name, pool]() -> boost::asio::awaitable<void> {
          co_await waiters_.async_wait_until(
              std::chrono::steady_clock::now() + std::chrono::hours(1), pool);
          returned_.push_back(name);
        },
        boost::asio::detached);
    settle_io();
  }
  // Runs what is ready; an io_context that ran out of work stops, so it is restarted first.
  void settle_io() {
    io_.restart();
    io_.poll();
  }
  std::vector<std::string> settle() {
    settle_io();
    auto out = returned_;
    returned_.clear();
    return out;
  }

  boost::asio::io_context io_;
  ClaimWaiters waiters_;
  std::vector<std::string> returned_;
};

TEST_F(ClaimWaitersTest, ANotificationWakesTheLongestWaitingPollOfEachPool) {
  wait("a1", "default");
  wait("a2", "default");
  wait("g1", "gpu");
  wait("a3", "default");
  EXPECT_TRUE(settle().empty());
  int broadcasts = 0;
  waiters_.set_broadcast([&] { ++broadcasts; });
  waiters_.notify();
  EXPECT_EQ(settle(), (std::vector<std::string>{"a1", "g1"}));
  EXPECT_EQ(broadcasts, 1) << "and the other replicas are told";
  waiters_.wake_local("default");
  EXPECT_EQ(settle(), (std::vector<std::string>{"a2"})) << "a pool's own wake passes it on there";
  waiters_.wake_local("gpu");
  EXPECT_TRUE(settle().empty()) << "no poll of gpu is left";
  wait("a4", "default");
  waiters_.stop();
  EXPECT_EQ(settle(), (std::vector<std::string>{"a3", "a4"}));
  wait("late", "default");
  EXPECT_EQ(settle(), (std::vector<std::string>{"late"})) << "after stop, waits return at once";
}

}  // namespace
}  // namespace takosumi::controlplane
