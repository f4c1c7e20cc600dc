#include "agent/offline/bundle_channel.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <map>

#include "common/error_codes.hpp"
#include "common/fd_io.hpp"
#include "common/file_io.hpp"
#include "crypto/sha256.hpp"
#include "common/failure_codes.hpp"
#include "protocol/offline_bundle.hpp"

namespace takosumi::agent {
namespace {

namespace fs = std::filesystem;
namespace asio = boost::asio;

// Copies a file durably: a temporary sibling of `to`, fsync'd, renamed over it.
Status copy_durably(const fs::path& from, const fs::path& to) {
  auto in = open_regular_file(from);
  if (!in) return std::unexpected(in.error());
  const fs::path temp = to.string() + ".partial";
  std::error_code ec;
  fs::remove(temp, ec);
  UniqueFd out(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!out.valid()) return std::unexpected(errno_error("create", temp, errno));
  std::vector<std::byte> buffer(1 << 16);
  for (;;) {
    auto got = read_full(in->fd.get(), buffer, from);
    if (!got) return std::unexpected(got.error());
    TAKOSUMI_TRY(write_all(out.get(), std::span(buffer.data(), *got), temp));
    if (*got < buffer.size()) break;
  }
  if (::fsync(out.get()) != 0) return std::unexpected(errno_error("fsync", temp, errno));
  TAKOSUMI_TRY(close_checked(std::move(out), temp));
  if (::rename(temp.c_str(), to.c_str()) != 0) return std::unexpected(errno_error("rename", to, errno));
  return fsync_directory(to.parent_path());
}

constexpr std::string_view kLogSuffix = ".log";

}  // namespace

BundleChannel::BundleChannel(fs::path in, fs::path out, fs::path started, std::string run_id,
                             std::string lease_token, std::int64_t lease_expires_at)
    : in_(std::move(in)),
      out_(std::move(out)),
      started_(std::move(started)),
      run_id_(std::move(run_id)),
      lease_(std::move(lease_token)),
      lease_expires_at_(lease_expires_at) {}

Status BundleChannel::check(const std::string& run_id, const std::string& lease) const {
  if (run_id == run_id_ && lease == lease_) return {};
  return fail(errc::kLeaseLost, "run " + run_id + " is not the Run of this bundle");
}

asio::awaitable<Result<HeartbeatAnswer>> BundleChannel::async_heartbeat(std::string run_id,
                                                                        std::string lease) {
  TAKOSUMI_CO_TRY(check(run_id, lease));
  co_return HeartbeatAnswer{lease_expires_at_, false};
}

asio::awaitable<Result<bool>> BundleChannel::async_start_apply(std::string run_id, std::string lease,
                                                               std::int64_t) {
  TAKOSUMI_CO_TRY(check(run_id, lease));
  co_return false;
}

asio::awaitable<Status> BundleChannel::async_download(std::string run_id, std::string kind,
                                                      std::string lease, fs::path to) {
  TAKOSUMI_CO_TRY(check(run_id, lease));
  const std::string member =
      kind == "source" ? std::string(protocol::kSourceMember) : protocol::envelope_member(kind);
  const auto& names = protocol::run_bundle_members();
  if (std::find(names.begin(), names.end(), member) == names.end())
    co_return fail(errc::kInvalidArgument, "artifact kind \"" + kind + "\" is not in a Run bundle");
  std::error_code ec;
  if (!fs::exists(in_ / member, ec))
    co_return fail(errc::kNotFound, "the Run bundle holds no " + member);
  if (!fs::exists(started_, ec)) TAKOSUMI_CO_TRY(write_file_atomic(started_, "started\n"));
  co_return copy_durably(in_ / member, to);
}

asio::awaitable<Status> BundleChannel::async_upload(std::string run_id, std::string kind,
                                                    std::string lease, fs::path from,
                                                    std::string sha256) {
  TAKOSUMI_CO_TRY(check(run_id, lease));
  if (kind != "state" && kind != "plan" && kind != "plan_view")
    co_return fail(errc::kInvalidArgument,
                   "artifact kind \"" + kind + "\" must be state, plan or plan_view");
  auto digest = crypto::sha256_file_hex(from);
  if (!digest) co_return std::unexpected(digest.error());
  if (*digest != sha256)
    co_return fail(errc::kInvalidArgument, "the " + kind + " artifact is not of sha256 " + sha256);
  TAKOSUMI_CO_TRY(ensure_directory(out_));
  co_return copy_durably(from, out_ / protocol::artifact_member(kind));
}

asio::awaitable<Status> BundleChannel::async_append_log(std::string run_id, std::string lease,
                                                        std::int64_t seq, std::string text) {
  TAKOSUMI_CO_TRY(check(run_id, lease));
  if (seq < 0) co_return fail(errc::kInvalidArgument, "a log chunk's seq is never negative");
  TAKOSUMI_CO_TRY(ensure_directory(out_ / "log"));
  // Zero-padded, so the chunks list in sequence order; a repeat replaces its chunk.
  char name[32];
  std::snprintf(name, sizeof name, "%020lld", static_cast<long long>(seq));
  co_return write_file_atomic(out_ / "log" / (std::string(name) + std::string(kLogSuffix)), text);
}

asio::awaitable<Status> BundleChannel::async_complete(std::string run_id, std::string report) {
  if (run_id != run_id_)
    co_return fail(errc::kLeaseLost, "run " + run_id + " is not the Run of this bundle");
  TAKOSUMI_CO_TRY(ensure_directory(out_));
  co_return write_file_atomic(out_ / "report.json", report);
}

asio::awaitable<Status> BundleChannel::async_put_report(std::string run_id, std::string lease,
                                                        std::string report) {
  TAKOSUMI_CO_TRY(check(run_id, lease));
  co_return co_await async_complete(std::move(run_id), std::move(report));
}

Result<std::vector<std::pair<std::string, fs::path>>> BundleChannel::result_files() const {
  std::error_code ec;
  if (!fs::exists(out_ / "report.json", ec))
    return fail(errc::kNotFound, "the Run has not reported yet");
  // The log chunks in sequence order, as one text.
  std::map<std::string, fs::path> chunks;
  if (fs::is_directory(out_ / "log", ec))
    for (const auto& entry : fs::directory_iterator(out_ / "log", ec))
      if (entry.path().extension() == kLogSuffix) chunks.emplace(entry.path().filename(), entry.path());
  std::string log;
  for (const auto& [name, path] : chunks) {
    auto text = read_file(path, 64u << 20);
    if (!text) return std::unexpected(text.error());
    log += *text;
  }
  TAKOSUMI_TRY(write_file_atomic(out_ / "log.txt", log));
  std::vector<std::pair<std::string, fs::path>> files{{"report.json", out_ / "report.json"},
                                                      {"log.txt", out_ / "log.txt"}};
  for (const char* kind : {"state", "plan", "plan_view"}) {
    const auto member = protocol::artifact_member(kind);
    if (fs::exists(out_ / member, ec)) files.emplace_back(member, out_ / member);
  }
  return files;
}

}  // namespace takosumi::agent
