#include "runner/module_files.hpp"

#include <algorithm>
#include <system_error>

#include "common/error_codes.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;

bool is_hidden(const std::string& name) { return !name.empty() && name.front() == '.'; }

class Walker {
 public:
  explicit Walker(fs::path root) : root_(std::move(root)) {}

  Status walk_root() {
    std::vector<fs::directory_entry> entries;
    if (auto listed = list(root_, entries); !listed)
      return fail(errc::kIoError, "scan module " + root_.string() + ": " + listed.error());
    files_.post_init = is_real_directory(root_ / ".terraform") &&
                       is_real_directory(root_ / ".terraform" / "modules");
    visit(entries, "", 0);
    if (files_.post_init) walk(".terraform/modules", 2);
    return {};
  }

  ModuleFiles take() { return std::move(files_); }

 private:
  // Directory listings are sorted so that files and the first incomplete reason are stable.
  std::expected<void, std::string> list(const fs::path& dir,
                                        std::vector<fs::directory_entry>& out) {
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) out.push_back(*it);
    if (ec) return std::unexpected(ec.message());
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) {
                return a.path().filename() < b.path().filename();
              });
    return {};
  }

  static bool is_real_directory(const fs::path& p) {
    std::error_code ec;
    return fs::symlink_status(p, ec).type() == fs::file_type::directory;
  }

  void incomplete(std::string reason) {
    if (files_.incomplete_reason.empty()) files_.incomplete_reason = std::move(reason);
  }

  void walk(const std::string& rel_dir, int depth) {
    if (stopped_) return;
    if (depth > kMaxModuleDirDepth) {
      incomplete(rel_dir + ": directories nested deeper than " +
                 std::to_string(kMaxModuleDirDepth));
      return;
    }
    std::vector<fs::directory_entry> entries;
    if (auto listed = list(root_ / rel_dir, entries); !listed) {
      incomplete(rel_dir + ": could not read: " + listed.error());
      return;
    }
    visit(entries, rel_dir, depth);
  }

  void visit(const std::vector<fs::directory_entry>& entries, const std::string& rel_dir,
             int depth) {
    for (const auto& entry : entries) {
      if (stopped_) return;
      const std::string name = entry.path().filename().string();
      const std::string rel = rel_dir.empty() ? name : rel_dir + "/" + name;
      std::error_code ec;
      const auto type = entry.symlink_status(ec).type();
      if (ec) {
        incomplete(rel + ": could not read: " + ec.message());
      } else if (type == fs::file_type::symlink) {
        visit_symlink(entry.path(), name, rel);
      } else if (type == fs::file_type::directory) {
        if (!is_hidden(name)) walk(rel, depth + 1);
      } else if (is_config_file_name(name) && !is_hidden(name)) {
        add_file(type, name, rel, rel_dir);
      }
    }
  }

  // OpenTofu follows links where this scan does not, so a linked file or directory is a part
  // of the module the scan has not seen.
  void visit_symlink(const fs::path& path, const std::string& name, const std::string& rel) {
    if (is_hidden(name)) return;
    std::error_code ec;
    if (is_config_file_name(name))
      incomplete(rel + ": is a symbolic link, which the scan does not follow");
    else if (fs::is_directory(fs::status(path, ec)))
      incomplete(rel + ": is a symbolic link to a directory, which the scan does not follow");
  }

  void add_file(fs::file_type type, const std::string& name, const std::string& rel,
                const std::string& rel_dir) {
    if (type != fs::file_type::regular) {
      incomplete(rel + ": not a regular file");
    } else if (++count_ > kMaxModuleFiles) {
      incomplete("more than " + std::to_string(kMaxModuleFiles) + " configuration files");
      stopped_ = true;
    } else {
      files_.directories[rel_dir].push_back(name);
    }
  }

  fs::path root_;
  ModuleFiles files_;
  std::size_t count_ = 0;
  bool stopped_ = false;
};

}  // namespace

bool is_config_file_name(std::string_view name) {
  for (std::string_view ext : {".tf", ".tf.json", ".tofu", ".tofu.json"})
    if (name.size() > ext.size() && name.ends_with(ext)) return true;
  return false;
}

Result<ModuleFiles> list_module_files(const std::filesystem::path& root) {
  Walker walker(root);
  TAKOSUMI_TRY(walker.walk_root());
  return walker.take();
}

}  // namespace takosumi::runner
