#include "agent/session/log_streamer.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "agent/session/retry.hpp"
#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::agent {
namespace asio = boost::asio;

LogStreamer::LogStreamer(asio::any_io_executor ex, RunChannel& client, std::string run_id,
                         std::string lease)
    : client_(client), run_id_(std::move(run_id)), lease_(std::move(lease)), wake_(ex) {}

void LogStreamer::append(std::string_view line) {
  // Bounded memory: when the control plane is slow, the oldest unsent output is what we keep and
  // the overflow is counted, then announced in the stream.
  if (buffer_.size() + line.size() + 1 > kMaxBuffered) {
    dropped_bytes_ += line.size() + 1;
    return;
  }
  buffer_.append(line);
  buffer_.push_back('\n');
  if (buffer_.size() >= kChunkBytes) wake_.cancel();
}

LogTail LogStreamer::pending() const {
  std::string text = buffer_;
  if (dropped_bytes_ > 0)
    text += "[takosumi-agent: " + std::to_string(dropped_bytes_) +
            " bytes of output dropped: log stream backlog]\n";
  return LogTail{next_seq_, std::move(text)};
}

void LogStreamer::finish() {
  finishing_ = true;
  wake_.cancel();
}

asio::awaitable<void> LogStreamer::async_run() {
  for (;;) {
    if (buffer_.empty() && dropped_bytes_ > 0) {
      buffer_ = "[takosumi-agent: " + std::to_string(dropped_bytes_) +
                " bytes of output dropped: log stream backlog]\n";
      dropped_bytes_ = 0;
    }
    if (!buffer_.empty() && !stalled_) {
      std::size_t cut = std::min(buffer_.size(), kChunkBytes);
      // Cut after a newline when possible so a chunk holds whole lines.
      if (auto nl = buffer_.rfind('\n', cut - 1); nl != std::string::npos) cut = nl + 1;
      std::string chunk = buffer_.substr(0, cut);
      buffer_.erase(0, cut);
      const auto seq = next_seq_++;
      auto sent = co_await async_retry(
          [&] { return client_.async_append_log(run_id_, lease_, seq, chunk); }, 5);
      if (!sent) {
        // Kept, not dropped: the text goes back to the front and the number is reused, so the
        // stream stays gap-free. When the Run is over, what is left becomes the spooled tail.
        next_seq_ = seq;
        buffer_.insert(0, chunk);
        if (sent.error().code == errc::kLeaseLost) stalled_ = true;
        if (finishing_) co_return;
        wake_.expires_after(std::chrono::seconds(1));
        co_await wake_.async_wait(asio::as_tuple(asio::use_awaitable));
      }
      continue;
    }
    if (finishing_) co_return;
    wake_.expires_after(std::chrono::seconds(1));
    co_await wake_.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

}  // namespace takosumi::agent
