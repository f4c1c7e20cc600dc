#include "runner/policy/module_files.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <system_error>

#include "common/error_codes.hpp"
#include "runner/policy/tree_path.hpp"

namespace takosumi::runner {
namespace {

namespace fs = std::filesystem;

bool is_hidden(std::string_view name) { return !name.empty() && name.front() == '.'; }

// Names OpenTofu looks for when it discovers plugins: provisioner plugins in the working
// directory and terraform.d/plugins take precedence over the built-in provisioners.
bool is_plugin_name(std::string_view name) {
  return name == "terraform.d" || name.starts_with("terraform-provider-") ||
         name.starts_with("terraform-provisioner-") || name.starts_with("terraform-credentials-");
}

std::string child(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

// The entry's own type, never following a link.
fs::file_type type_of(const fs::path& p) {
  std::error_code ec;
  return fs::symlink_status(p, ec).type();
}

// Directory listings are sorted so that files and the first incomplete reason are stable.
std::expected<std::vector<std::string>, std::string> list(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec))
    names.push_back(it->path().filename().string());
  if (ec) return std::unexpected(ec.message());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

bool is_config_file_name(std::string_view name) {
  for (std::string_view ext : {".tf", ".tf.json", ".tofu", ".tofu.json"})
    if (name.size() > ext.size() && name.ends_with(ext)) return true;
  return false;
}

ModuleTree::ModuleTree(fs::path checkout, fs::path working_dir)
    : checkout_(std::move(checkout)), working_dir_(std::move(working_dir)) {}

void ModuleTree::incomplete(std::string reason) {
  if (incomplete_reason_.empty()) incomplete_reason_ = std::move(reason);
}

Status ModuleTree::start() {
  if (auto names = list(working_dir_); !names)
    return fail(errc::kIoError, "scan module " + working_dir_.string() + ": " + names.error());
  auto phys = resolve_in_tree(checkout_, "", working_dir_.lexically_relative(checkout_));
  if (!phys) {
    incomplete("the module directory " + phys.error());
    return {};
  }
  working_phys_ = *phys;
  const fs::path dot_terraform = checkout_ / working_phys_ / ".terraform";
  post_init_ = type_of(dot_terraform) == fs::file_type::directory &&
               type_of(dot_terraform / "modules") == fs::file_type::directory;
  std::vector<fs::path> ancestors;
  walk({"", working_phys_, 0}, ancestors);
  return {};
}

void ModuleTree::add_call(const std::string& where, const std::string& path) {
  if (stopped_ || listed_.contains(path)) return;
  auto target = resolve_in_tree(checkout_, working_phys_, path);
  if (!target) return incomplete(where + " " + target.error());
  if (type_of(checkout_ / *target) != fs::file_type::directory)
    return incomplete(where + " is not a directory");
  std::vector<fs::path> ancestors;
  walk({path, *target, 0}, ancestors);
}

std::vector<ModuleDirFiles> ModuleTree::take_new() { return std::exchange(new_, {}); }

void ModuleTree::walk(const Visit& at, std::vector<fs::path>& ancestors) {
  if (stopped_ || listed_.contains(at.dir)) return;
  if (at.depth > kMaxModuleDirDepth)
    return incomplete(at.dir + ": directories nested deeper than " + std::to_string(kMaxModuleDirDepth));
  if (++dirs_ > kMaxModuleDirs) {
    incomplete("more than " + std::to_string(kMaxModuleDirs) + " directories");
    stopped_ = true;
    return;
  }
  listed_.insert(at.dir);
  auto names = list(checkout_ / at.phys);
  if (!names) return incomplete((at.dir.empty() ? "." : at.dir) + ": could not read: " + names.error());
  if ((entries_ += names->size()) > kMaxModuleEntries) {
    incomplete("more than " + std::to_string(kMaxModuleEntries) + " directory entries");
    stopped_ = true;
    return;
  }
  ancestors.push_back(at.phys);
  ModuleDirFiles files{at.dir, {}};
  std::vector<Visit> subdirs;
  for (const auto& name : *names) {
    if (stopped_) break;
    visit_entry(at, name, ancestors, files, subdirs);
  }
  if (!files.names.empty()) new_.push_back(std::move(files));
  for (const auto& sub : subdirs) walk(sub, ancestors);
  ancestors.pop_back();
}

void ModuleTree::visit_entry(const Visit& at, const std::string& name,
                             const std::vector<fs::path>& ancestors, ModuleDirFiles& files,
                             std::vector<Visit>& subdirs) {
  if (name == ".git") return;  // never loaded by OpenTofu; links in it are git's business
  const std::string rel = child(at.dir, name);
  if (is_plugin_name(name))
    plugin_files_.push_back(rel + ": a plugin binary or directory OpenTofu would load instead of "
                                  "the mirror's providers");
  const fs::file_type type = type_of(checkout_ / at.phys / name);
  if (type == fs::file_type::symlink) return visit_link(at, name, ancestors, files, subdirs);
  if (type == fs::file_type::directory) {
    // The working directory's .terraform holds tofu's own files (providers link into the
    // mirror); only the modules init downloaded are configuration, listed under the working
    // directory's own name. Reached through an ancestor's tree, it is not walked again.
    if (at.phys / name == working_phys_ / ".terraform") {
      if (at.dir.empty() && post_init_)
        subdirs.push_back({".terraform/modules", at.phys / name / "modules", 1});
      return;
    }
    subdirs.push_back({rel, at.phys / name, at.depth + 1});
    return;
  }
  add_file(rel, at.phys / name, type == fs::file_type::regular, files);
}

// OpenTofu follows links wherever they lead; the scan follows them only inside the checkout and
// refuses to vouch for the rest.
void ModuleTree::visit_link(const Visit& at, const std::string& name,
                            const std::vector<fs::path>& ancestors, ModuleDirFiles& files,
                            std::vector<Visit>& subdirs) {
  const std::string rel = child(at.dir, name);
  auto target = resolve_in_tree(checkout_, at.phys, name);
  if (!target) return incomplete(rel + ": symbolic link " + target.error());
  const fs::file_type type = type_of(checkout_ / *target);
  if (type == fs::file_type::directory) {
    // A link back to a directory being walked adds nothing that is not walked already.
    if (std::find(ancestors.begin(), ancestors.end(), *target) != ancestors.end()) return;
    subdirs.push_back({rel, *target, at.depth + 1});
    return;
  }
  add_file(rel, name, *target, type == fs::file_type::regular, files);
}

void ModuleTree::add_file(const std::string& rel, const fs::path& phys, bool regular,
                          ModuleDirFiles& files) {
  add_file(rel, phys.filename().string(), phys, regular, files);
}

// The agent's override file is the agent's wherever the tree reaches it: through the working
// directory itself, or as "../../examples/x/takosumi_override.tofu" when a module there calls its
// ancestor (the layout of most published modules' examples). Known by its physical place.
void ModuleTree::add_file(const std::string& rel, const std::string& name, const fs::path& phys,
                          bool regular, ModuleDirFiles& files) {
  if (phys == working_phys_ / kAgentOverrideFile) return;
  if (!is_config_file_name(name) || is_hidden(name)) return;
  if (!regular) return incomplete(rel + ": not a regular file");
  if (++files_ > kMaxModuleFiles) {
    incomplete("more than " + std::to_string(kMaxModuleFiles) + " configuration files");
    stopped_ = true;
    return;
  }
  files.names.push_back(name);
}

}  // namespace takosumi::runner
