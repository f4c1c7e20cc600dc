#include "agent/durable/nonce_journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>

#include "common/error_codes.hpp"
#include "common/fd_io.hpp"
#include "common/file_io.hpp"
#include "common/unique_fd.hpp"

namespace takosumi::agent {
namespace {

constexpr std::size_t kMaxJournal = 16u << 20;
constexpr std::size_t kMaxNonce = 128;

bool is_token(std::string_view s) {
  return !s.empty() && s.size() <= kMaxNonce &&
         std::all_of(s.begin(), s.end(), [](char c) { return c > ' ' && c < 0x7f; });
}

}  // namespace

Result<NonceJournal> NonceJournal::open(std::filesystem::path file, std::int64_t now) {
  NonceJournal journal(std::move(file));
  std::error_code ec;
  if (std::filesystem::exists(journal.file_, ec)) {
    auto text = read_file(journal.file_, kMaxJournal);
    if (!text) return std::unexpected(text.error().with_context("nonce journal"));
    std::string_view rest = *text;
    while (!rest.empty()) {
      const auto eol = rest.find('\n');
      if (eol == std::string_view::npos) break;  // a torn last line
      const std::string_view line = rest.substr(0, eol);
      rest.remove_prefix(eol + 1);
      const auto space = line.find(' ');
      if (space == std::string_view::npos) continue;
      std::int64_t expires = 0;
      const auto number = line.substr(0, space);
      if (std::from_chars(number.data(), number.data() + number.size(), expires).ec != std::errc{})
        continue;
      const auto nonce = line.substr(space + 1);
      if (expires > now && is_token(nonce)) journal.entries_.emplace_back(std::string(nonce), expires);
    }
  }
  TAKOSUMI_TRY(journal.rewrite());
  return journal;
}

Status NonceJournal::rewrite() {
  std::string live;
  for (const auto& [nonce, expires] : entries_) live += std::to_string(expires) + " " + nonce + "\n";
  if (auto written = write_file_atomic(file_, live, 0600); !written)
    return std::unexpected(written.error().with_context("nonce journal"));
  lines_on_disk_ = entries_.size();
  return {};
}

Status NonceJournal::record(const std::string& nonce, std::int64_t expires_at, std::int64_t now) {
  if (!is_token(nonce))
    return fail(errc::kInvalidArgument, "a manifest nonce must be one printable token");
  std::erase_if(entries_, [now](const auto& e) { return e.second <= now; });
  // Without this the file grew by a line per Run until the next start (and an agent that ran long
  // enough would one day be refused its own journal at start for its size).
  if (lines_on_disk_ >= 2 * entries_.size() + 64) {
    entries_.emplace_back(nonce, expires_at);
    if (auto rewritten = rewrite(); !rewritten) {
      entries_.pop_back();
      return rewritten;
    }
    return {};
  }
  const std::string line = std::to_string(expires_at) + " " + nonce + "\n";
  const UniqueFd fd(::open(file_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid()) return std::unexpected(errno_error("open nonce journal", file_, errno));
  // A torn line (a crash mid-write) is skipped on the next open.
  if (auto written = write_all(fd.get(), line, file_); !written)
    return std::unexpected(written.error().with_context("append to nonce journal"));
  if (::fdatasync(fd.get()) != 0)
    return std::unexpected(errno_error("sync nonce journal", file_, errno));
  entries_.emplace_back(nonce, expires_at);
  ++lines_on_disk_;
  return {};
}

}  // namespace takosumi::agent
