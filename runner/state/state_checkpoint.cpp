#include "runner/state/state_checkpoint.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <system_error>

#include "common/error_codes.hpp"
#include "common/fd_io.hpp"
#include "common/file_io.hpp"
#include "common/unique_fd.hpp"
#include "common/failure_codes.hpp"
#include "runner/state/run_workspace.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;

bool same_identity(const StateIdentity& a, std::int64_t serial, const std::string& lineage) {
  return a.serial == serial && a.lineage == lineage;
}

bool is_prior(const StateIdentity& id, const protocol::JobManifest& m) {
  return m.prior_state && same_identity(id, m.prior_state->serial, m.prior_state->lineage);
}

// The module writes in the workspace: the state is opened without following a link and without
// blocking on a FIFO, and read only when it is a regular file.
Result<std::optional<std::string>> read_state_file(const fs::path& path, std::uint64_t max_bytes) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT || errno == ELOOP) return std::optional<std::string>{};
    return std::unexpected(errno_error("open", path, errno));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::uint64_t>(st.st_size) > max_bytes)
    return std::optional<std::string>{};
  // A read error or a state grown past the limit is no checkpoint either.
  auto text = read_all(fd.get(), max_bytes, path);
  if (!text) return std::optional<std::string>{};
  return std::optional<std::string>(std::move(*text));
}

// Reads the state once and, when it is a whole state, writes that very text to scratch: what is
// sealed is exactly what was checked, even while tofu rewrites the original.
Result<std::optional<StateIdentity>> snapshot(const fs::path& state, const fs::path& scratch,
                                              std::uint64_t max_bytes) {
  auto text = read_state_file(state, max_bytes);
  if (!text) return std::unexpected(text.error());
  if (!*text) return std::optional<StateIdentity>{};
  auto identity = parse_state_identity(**text, max_bytes);
  if (!identity) return std::optional<StateIdentity>{};  // not whole yet, or not a state
  TAKOSUMI_TRY(write_file_atomic(scratch, **text, 0600));
  return std::optional<StateIdentity>(std::move(*identity));
}

}  // namespace

StateCheckpointer::StateCheckpointer(const RunWorkspace& workspace, fs::path state_file,
                                     fs::path outbox, const protocol::JobManifest& manifest,
                                     std::uint64_t max_state_bytes)
    : workspace_(workspace),
      state_file_(std::move(state_file)),
      scratch_(workspace.capture("checkpoint.tfstate")),
      outbox_(std::move(outbox)),
      manifest_(manifest),
      read_limit_(state_read_limit(max_state_bytes)) {}

Result<bool> StateCheckpointer::checkpoint() {
  std::error_code ec;
  const auto mtime = fs::last_write_time(state_file_, ec);
  if (ec) return false;
  const auto size = fs::file_size(state_file_, ec);
  if (ec) return false;
  // File timestamps tick coarsely (a kernel jiffy): two writes of the same size close together can
  // look identical, so only a file that has stayed put for a while is skipped unread.
  const bool settled = fs::file_time_type::clock::now() - mtime > std::chrono::seconds(2);
  if (settled && mtime == last_mtime_ && size == last_size_) return false;
  if (!workspace_.check_regular_file(state_file_)) return false;  // a link out of the workspace
  auto identity = snapshot(state_file_, scratch_, read_limit_);
  if (!identity) return std::unexpected(identity.error());
  if (!*identity) return false;  // try again on the next change
  last_mtime_ = mtime;
  last_size_ = size;
  const bool seen = last_ && same_identity(**identity, last_->serial, last_->lineage);
  if (seen || is_prior(**identity, manifest_)) {
    (void)remove_tree(scratch_);
    return false;
  }
  auto sealed = seal_state_checkpoint(scratch_, outbox_, manifest_, **identity);
  (void)remove_tree(scratch_);
  if (!sealed) return std::unexpected(sealed.error());
  last_ = std::move(**identity);
  ++count_;
  return true;
}

Result<std::optional<RecoveredState>> recover_newest_state(const fs::path& work_root,
                                                           const fs::path& outbox,
                                                           const protocol::JobManifest& m,
                                                           std::uint64_t max_state_bytes) {
  using Found = std::optional<RecoveredState>;
  auto ws = RunWorkspace::open_existing(work_root, m.run_id, m.attempt);
  if (ws) {
    const fs::path module_dir = (ws->source() / m.source.module_path).lexically_normal();
    const fs::path scratch = ws->capture("recovered.tfstate");
    for (const char* name : {kErroredStateFile, kStateFile}) {
      const fs::path state = module_dir / name;
      if (!fs::exists(fs::symlink_status(state)) || !ws->check_regular_file(state)) continue;
      auto identity = snapshot(state, scratch, state_read_limit(max_state_bytes));
      if (!identity) return std::unexpected(identity.error());
      if (!*identity) continue;  // torn by the crash: an older copy may still be whole
      if (is_prior(**identity, m)) {
        (void)remove_tree(scratch);
        return Found{};
      }
      auto sealed = seal_state(scratch, outbox, m, **identity);
      (void)remove_tree(scratch);
      if (!sealed) return std::unexpected(sealed.error());
      return Found(RecoveredState{SealedState{std::move(*sealed), std::move(**identity)}, name});
    }
  }
  // The apply had ended and its final state was sealed before the agent stopped.
  const fs::path target = sealed_state_path(outbox, m);
  if (fs::exists(fs::symlink_status(target))) {
    auto described = describe_sealed_state(target);
    if (!described) return std::unexpected(described.error());
    if (is_prior(described->identity, m)) return Found{};
    return Found(RecoveredState{std::move(*described), target.filename().string()});
  }
  const fs::path checkpoint = checkpoint_path(outbox, m);
  if (!fs::exists(fs::symlink_status(checkpoint))) return Found{};
  auto described = describe_sealed_state(checkpoint);
  if (!described) return std::unexpected(described.error());
  if (is_prior(described->identity, m)) return Found{};
  // The checkpoint becomes the Run's state artifact as it is: same envelope, same digest.
  std::error_code ec;
  fs::rename(checkpoint, target, ec);
  if (ec) return fail(errc::kWorkspaceFailed, "rename " + checkpoint.string() + ": " + ec.message());
  TAKOSUMI_TRY(fsync_directory(outbox));
  described->artifact.path = target;
  return Found(RecoveredState{std::move(*described), "checkpoint"});
}

}  // namespace takosumi::runner
