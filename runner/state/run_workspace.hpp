#pragma once
// The private directory of one Run attempt: <work_root>/<run_id>-<attempt>, mode 0700, holding
// the checkout, the CLI config, tofu's HOME and TMPDIR, the plan file and captured tofu output.
// Everything in it is plaintext that may hold secrets; wipe() removes it all.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace takosumi::runner {

class RunWorkspace {
 public:
  // Refuses run ids that are not a plain file name (manifest_invalid). A leftover directory of
  // the same attempt is removed first. Errors: manifest_invalid, workspace_failed.
  static Result<RunWorkspace> create(const std::filesystem::path& work_root,
                                     std::string_view run_id, std::int64_t attempt);

  // The workspace an earlier agent process left (recovery after a crash): not_found when it is
  // gone (a reboot wiped the tmpfs), manifest_invalid for an unsafe run id.
  static Result<RunWorkspace> open_existing(const std::filesystem::path& work_root,
                                            std::string_view run_id, std::int64_t attempt);

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path home() const { return root_ / "home"; }
  std::filesystem::path tmp() const { return root_ / "tmp"; }
  std::filesystem::path source() const { return root_ / "src"; }
  // The agent's own files, read-only inside the sandbox (bound over the writable workspace): the
  // CLI config and the frozen plans tofu show and tofu apply read, so nothing a module runs can
  // change them between the agent's check and tofu's use.
  std::filesystem::path agent_dir() const { return root_ / "agent"; }
  std::filesystem::path cli_config() const { return agent_dir() / "tofurc"; }
  // File credentials of Connections (0700 directories, 0400 files); see RunCredentials.
  std::filesystem::path credentials() const { return root_ / "credentials"; }
  // Held by takosumi-supervise while a tofu command of this Run runs (supervise/supervise.hpp): a
  // restarted agent waits for it before it reads what tofu left.
  std::filesystem::path lock_file() const { return root_ / "tofu.lock"; }
  // Where `tofu plan -out` writes (the writable workspace), and the agent-owned copy of exactly
  // those bytes that is shown, sealed and applied.
  std::filesystem::path plan_file() const { return root_ / "run.tfplan"; }
  std::filesystem::path frozen_plan() const { return agent_dir() / "run.tfplan"; }
  // The plaintext of the sealed plan (plan_contents.hpp): scratch while sealing or restoring.
  std::filesystem::path plan_contents() const { return agent_dir() / "run.tfplan.contents"; }
  // The refresh-only plan of a drift check: read, never sealed or uploaded.
  std::filesystem::path drift_plan_file() const { return root_ / "drift.tfplan"; }
  // Where stdout of data commands (show -json, output -json) is captured; never logged.
  std::filesystem::path capture(std::string_view name) const;

  // For files the sandboxed module could have written: the path must resolve, through every
  // link, to a regular file inside this workspace (not a link to another Run's state, not a FIFO
  // that would block the agent). workspace_failed otherwise.
  Status check_regular_file(const std::filesystem::path& path) const;

  // Writes one of the agent's files into the checkout (source()), which is writable in the
  // sandbox: the parent directory is resolved beneath source() without following any link
  // (openat2), the content goes to a fresh temporary created there exclusively and then replaces
  // the entry (whatever a module left there: a link, a file). workspace_failed otherwise.
  Status write_in_source(const std::filesystem::path& path, std::string_view content) const;

  // Copies a file tofu wrote (checked as above, opened without following links, at most
  // max_bytes: limit_exceeded past it) to an agent-owned path, replacing what was there (0600).
  // Call only while no tofu command runs.
  Status freeze(const std::filesystem::path& written, const std::filesystem::path& copy,
                std::uint64_t max_bytes) const;

  Status wipe() const;

 private:
  explicit RunWorkspace(std::filesystem::path root) : root_(std::move(root)) {}
  std::filesystem::path root_;
};

// True for names made of [A-Za-z0-9._-] that are not "." or "..", at most 128 characters.
bool is_safe_file_name(std::string_view name);

}  // namespace takosumi::runner
