#pragma once
// Finds the configuration files a module can reach, for the policy scan: the working directory's
// tree, the modules `tofu init` downloaded into it, and the directories its local module calls
// name elsewhere in the checkout. Symbolic links are resolved physically inside the checkout
// (tree_path.hpp); within fixed limits.
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace takosumi::runner {

inline constexpr std::size_t kMaxModuleFiles = 10000;
inline constexpr std::size_t kMaxModuleDirs = 10000;
// Directory entries looked at in all: links may show one directory under many names, and each
// name is listed again, so the directory count alone does not bound the work.
inline constexpr std::size_t kMaxModuleEntries = 100000;
inline constexpr int kMaxModuleDirDepth = 64;

// The agent's own override file in the working directory (forcing the local backend). A .tofu
// file, because OpenTofu ignores a .tf file when a .tofu file of the same name exists. The tree
// never lists it, under whatever name it is reached (ModuleTree::add_file): it is the agent's,
// rewritten before every command.
inline constexpr std::string_view kAgentOverrideFile = "takosumi_override.tofu";

// One directory of configuration files, named as OpenTofu names it: relative to the working
// directory, generic form, "" for the working directory itself ("../../modules/label" for a
// module elsewhere in the checkout).
struct ModuleDirFiles {
  std::string dir;
  std::vector<std::string> names;  // .tf, .tf.json, .tofu, .tofu.json; sorted
};

// Lists what OpenTofu could load. Every directory is walked, hidden ones included, except .git
// and, in the working directory, .terraform (of which only .terraform/modules, where `tofu init`
// puts downloaded modules). Files whose names start with a dot are skipped (OpenTofu ignores
// them). A symbolic link anywhere (but in .git) must resolve inside the checkout: an absolute,
// dangling or escaping one makes the listing incomplete; one that resolves is followed like the
// file or directory it leads to (a link back to a directory being walked is not walked again).
// Also incomplete: other special files with configuration names, unreadable directories and the
// limits (kMaxModuleFiles files, kMaxModuleDirs directories, kMaxModuleEntries entries,
// kMaxModuleDirDepth levels).
// Plugin binaries OpenTofu would look for in a module (terraform-provider-*, -provisioner-*,
// -credentials-* files and terraform.d directories) are listed apart.
class ModuleTree {
 public:
  // checkout and working_dir are absolute; working_dir is inside checkout.
  ModuleTree(std::filesystem::path checkout, std::filesystem::path working_dir);

  // Lists the working directory's tree. io_error only when the working directory itself cannot
  // be listed.
  Status start();
  // A local module call `where` (for messages) whose lexically cleaned path relative to the
  // working directory is `path`: lists that directory's tree unless it was listed under that
  // name. Records an incomplete listing when it leaves the checkout or does not exist.
  void add_call(const std::string& where, const std::string& path);
  // The directories listed since the last call, in listing order.
  std::vector<ModuleDirFiles> take_new();

  bool post_init() const { return post_init_; }  // .terraform/modules exists
  const std::string& incomplete_reason() const { return incomplete_reason_; }
  const std::vector<std::string>& plugin_files() const { return plugin_files_; }
  std::filesystem::path working_dir() const { return working_dir_; }

 private:
  struct Visit {
    std::string dir;               // as OpenTofu names it (see ModuleDirFiles)
    std::filesystem::path phys;    // physical, relative to the checkout
    int depth = 0;
  };
  void walk(const Visit& at, std::vector<std::filesystem::path>& ancestors);
  void visit_entry(const Visit& at, const std::string& name,
                   const std::vector<std::filesystem::path>& ancestors, ModuleDirFiles& files,
                   std::vector<Visit>& subdirs);
  void visit_link(const Visit& at, const std::string& name,
                  const std::vector<std::filesystem::path>& ancestors, ModuleDirFiles& files,
                  std::vector<Visit>& subdirs);
  // rel: as OpenTofu names the file; phys: where it is, relative to the checkout; name: its
  // name in its directory (a link's own name, not its target's).
  void add_file(const std::string& rel, const std::filesystem::path& phys, bool regular,
                ModuleDirFiles& files);
  void add_file(const std::string& rel, const std::string& name, const std::filesystem::path& phys,
                bool regular, ModuleDirFiles& files);
  void incomplete(std::string reason);

  std::filesystem::path checkout_;
  std::filesystem::path working_dir_;
  std::filesystem::path working_phys_;  // the working directory, physical, relative to checkout_
  bool post_init_ = false;
  std::set<std::string> listed_;        // directories listed, by OpenTofu's name
  std::vector<ModuleDirFiles> new_;
  std::size_t files_ = 0;
  std::size_t dirs_ = 0;
  std::size_t entries_ = 0;
  bool stopped_ = false;
  std::string incomplete_reason_;
  std::vector<std::string> plugin_files_;
};

bool is_config_file_name(std::string_view name);

}  // namespace takosumi::runner
