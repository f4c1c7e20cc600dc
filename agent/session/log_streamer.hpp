#pragma once
// Streams a Run's output to the control plane while it runs: lines are buffered and sent as
// numbered chunks (seq 0, 1, …) at most every flush interval or when 32 KiB accumulate. Sending
// happens on one coroutine so chunks arrive in order. A chunk that cannot be delivered is kept and
// tried again (the Run itself is never failed for a log hiccup); what is still unsent when the
// Run is over is its tail, spooled with the Run's results (agent/durable/run_spool.hpp). Memory is
// bounded: past kMaxBuffered the newest output is counted and announced instead of kept.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "agent/session/run_channel.hpp"

namespace takosumi::agent {

struct LogTail {
  std::int64_t seq = 0;  // the number of its first chunk
  std::string text;
};

class LogStreamer {
 public:
  LogStreamer(boost::asio::any_io_executor ex, RunChannel& client, std::string run_id,
              std::string lease);
  // Appends one line (a newline is added). Called on the io thread.
  void append(std::string_view line);
  // Sends chunks until finish() is called and the buffer is drained.
  boost::asio::awaitable<void> async_run();
  // Asks async_run to send what is left and return (it gives up after a few tries).
  void finish();
  // What the control plane has not received; after async_run returned, the tail to spool.
  LogTail pending() const;

 private:
  static constexpr std::size_t kChunkBytes = 32 * 1024;
  static constexpr std::size_t kMaxBuffered = 4 * 1024 * 1024;

  RunChannel& client_;
  std::string run_id_;
  std::string lease_;
  std::string buffer_;
  std::int64_t next_seq_ = 0;
  std::size_t dropped_bytes_ = 0;
  bool finishing_ = false;
  bool stalled_ = false;  // the lease is gone: keep the text, stop sending
  boost::asio::steady_timer wake_;
};

}  // namespace takosumi::agent
