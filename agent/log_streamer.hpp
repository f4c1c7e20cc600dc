#pragma once
// Streams a Run's output to the control plane while it runs: lines are buffered and sent as
// numbered chunks (seq 0, 1, …) at most every flush interval or when 32 KiB accumulate. Sending
// happens on one coroutine so chunks arrive in order; a chunk that cannot be delivered after
// retries is dropped from the live stream (the Run itself is not failed for a log hiccup).
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "agent/control_client.hpp"

namespace takosumi::agent {

class LogStreamer {
 public:
  LogStreamer(boost::asio::any_io_executor ex, ControlClient& client, std::string run_id,
              std::string lease);
  // Appends one line (a newline is added). Called on the io thread.
  void append(std::string_view line);
  // Sends chunks until finish() is called and the buffer is drained.
  boost::asio::awaitable<void> async_run();
  // Asks async_run to send what is left and return.
  void finish();

 private:
  static constexpr std::size_t kChunkBytes = 32 * 1024;
  static constexpr std::size_t kMaxBuffered = 4 * 1024 * 1024;

  ControlClient& client_;
  std::string run_id_;
  std::string lease_;
  std::string buffer_;
  std::int64_t next_seq_ = 0;
  std::size_t dropped_bytes_ = 0;
  bool finishing_ = false;
  boost::asio::steady_timer wake_;
};

}  // namespace takosumi::agent
