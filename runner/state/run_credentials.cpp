#include "runner/state/run_credentials.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "common/error_codes.hpp"
#include "common/fd_io.hpp"
#include "common/file_io.hpp"
#include "common/unique_fd.hpp"
#include "protocol/credential_names.hpp"
#include "common/failure_codes.hpp"
#include "runner/state/run_workspace.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;

SecretBytes env_entry(std::string_view name, std::string_view value) {
  SecretBytes out(name.size() + 1 + value.size());
  auto* p = reinterpret_cast<char*>(out.data());
  std::copy(name.begin(), name.end(), p);
  p[name.size()] = '=';
  std::copy(value.begin(), value.end(), p + name.size() + 1);
  return out;
}

std::vector<std::string> as_strings(const std::vector<SecretBytes>& entries) {
  std::vector<std::string> out;
  out.reserve(entries.size());
  for (const auto& e : entries) out.emplace_back(e.reveal_as_string());
  return out;
}

// O_EXCL|O_NOFOLLOW: the file is new and ours, never a link planted by the module.
Status write_credential_file(const fs::path& path, const SecretBytes& value) {
  const UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400));
  if (!fd.valid()) return std::unexpected(errno_error("create credential file", path, errno));
  return write_all(fd.get(), value.span(), path);
}

Status zero_and_remove(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT ? Status{} : std::unexpected(errno_error("stat", path, errno));
  if (S_ISREG(st.st_mode)) {
    ::chmod(path.c_str(), 0600);
    // Best effort: the unlink below is what must succeed.
    const UniqueFd fd(::open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC));
    if (fd.valid()) {
      const std::vector<std::uint8_t> zeros(static_cast<std::size_t>(st.st_size), 0);
      (void)write_all(fd.get(), zeros, path);
      ::fsync(fd.get());
    }
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return std::unexpected(errno_error("remove", path, errno));
  return {};
}

}  // namespace

RunCredentials::~RunCredentials() { (void)wipe(); }

RunCredentials::RunCredentials(RunCredentials&& other) noexcept { *this = std::move(other); }

RunCredentials& RunCredentials::operator=(RunCredentials&& other) noexcept {
  if (this == &other) return *this;
  (void)wipe();
  connection_env_ = std::exchange(other.connection_env_, {});
  variable_env_ = std::exchange(other.variable_env_, {});
  names_ = std::exchange(other.names_, {});
  skipped_ = std::exchange(other.skipped_, {});
  files_ = std::exchange(other.files_, {});
  dir_ = std::exchange(other.dir_, {});
  return *this;
}

Result<RunCredentials> RunCredentials::prepare(const protocol::SecretBundle& bundle,
                                               const std::set<std::string>& locked_providers,
                                               const fs::path& dir) {
  if (auto valid = protocol::validate_secret_bundle(bundle); !valid)
    return fail(errc::kManifestInvalid, "secrets: " + valid.error().message);
  RunCredentials creds;
  creds.dir_ = dir;
  for (const auto& c : bundle.connections) {
    if (!locked_providers.contains(c.provider)) {
      creds.skipped_.push_back(c.name + " (" + c.provider + ")");
      continue;
    }
    if (!is_safe_file_name(c.id))
      return fail(errc::kManifestInvalid, "secrets: connection id \"" + c.id + "\" is not a safe name");
    fs::path conn_dir = dir / c.id;
    if (c.mode == protocol::AuthMode::files) {
      if (auto made = ensure_directory(dir, 0700); !made)
        return fail(errc::kWorkspaceFailed, "credentials: " + made.error().message);
      if (auto made = ensure_directory(conn_dir, 0700); !made)
        return fail(errc::kWorkspaceFailed, "credentials: " + made.error().message);
    }
    for (const auto& [name, value] : c.values) {
      creds.names_.push_back(name);
      if (c.mode == protocol::AuthMode::env) {
        creds.connection_env_.push_back(env_entry(name, value.reveal_as_string()));
        continue;
      }
      const fs::path file = conn_dir / name;
      creds.files_.push_back(file);
      if (auto written = write_credential_file(file, value); !written)
        return fail(errc::kWorkspaceFailed, "credentials: " + written.error().message);
      creds.connection_env_.push_back(env_entry(name, file.string()));
    }
  }
  for (const auto& [name, value] : bundle.sensitive_variables) {
    creds.names_.push_back("TF_VAR_" + name);
    creds.variable_env_.push_back(env_entry("TF_VAR_" + name, value.reveal_as_string()));
  }
  std::sort(creds.names_.begin(), creds.names_.end());
  return creds;
}

std::vector<std::string> RunCredentials::plan_environment() const {
  auto env = as_strings(connection_env_);
  auto vars = as_strings(variable_env_);
  env.insert(env.end(), vars.begin(), vars.end());
  return env;
}

std::vector<std::string> RunCredentials::apply_environment() const {
  return as_strings(connection_env_);
}

std::vector<std::string> RunCredentials::names() const { return names_; }

Status RunCredentials::wipe() {
  Status result;
  for (const auto& file : files_)
    if (auto removed = zero_and_remove(file); !removed && result) result = removed;
  files_.clear();
  if (!dir_.empty()) {
    if (auto removed = remove_tree(dir_); !removed && result) result = removed;
    dir_.clear();
  }
  connection_env_.clear();
  variable_env_.clear();
  return result;
}

}  // namespace takosumi::runner
