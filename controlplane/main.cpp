// takosumi-control: the reference control plane. Parses the command line (CLI11: every command
// has --help, on stdout with exit 0; a wrong one is exit 2 with the reason on stderr) and hands
// over to controlplane/commands.hpp.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/version.hpp"
#include "controlplane/commands.hpp"
#include "git/helper_main.hpp"
#include "git/remote_helper.hpp"

int main(int argc, char** argv) {
  // takosumi-control as its own Git helper (git/remote_helper.hpp): a ref listing or a source
  // fetch that a deadline can end. Not a command for people: it speaks a pipe protocol.
  if (argc == 2 && std::string_view(argv[1]) == takosumi::git::kHelperCommand)
    return takosumi::git::git_helper_main();
  using namespace takosumi::controlplane;
  CLI::App app{"takosumi-control " TAKOSUMI_VERSION ": the reference control plane of takosumi "
               "(docs/operations.md)",
               "takosumi-control"};
  app.set_version_flag("--version", "takosumi-control " TAKOSUMI_VERSION);
  app.require_subcommand(1);
  std::filesystem::path config, data_dir, password_file;
  std::string key, source_key, backup, from, to;
  std::function<int()> chosen;
  const auto configured = [&](std::string_view name, std::string_view about) {
    auto* command = app.add_subcommand(std::string(name), std::string(about));
    command->add_option("--config", config, "the control plane's configuration (docs/configuration.md)")
        ->required();
    return command;
  };
  configured("serve", "serve the public API and the agent protocol")->callback([&] {
    chosen = [&] { return command_serve(config); };
  });
  configured("check-config", "load and check the configuration, the keys and the store, then exit")
      ->callback([&] { chosen = [&] { return command_check_config(config); }; });
  configured("migrate", "bring the store's schema to this version (replicas stopped)")->callback([&] {
    chosen = [&] { return command_migrate(config); };
  });
  auto* init = app.add_subcommand("init-keys", "create the storage and signing keys in a data directory");
  init->add_option("--data-dir", data_dir, "the data directory")->required();
  init->callback([&] { chosen = [&] { return command_init_keys(data_dir); }; });
  auto* rotate = configured("rotate-keys", "rotate the storage or the signing key in place "
                                           "(docs/operations.md \"Rotating the keys\")");
  rotate->add_option("--key", key, "which key")->required()->check(CLI::IsMember({"storage", "signing"}));
  rotate->callback([&] {
    chosen = [&] {
      return command_rotate_keys(config, key == "storage" ? RotatedKey::storage : RotatedKey::signing);
    };
  });
  auto* restore = configured("restore", "restore a Workspace from a signed backup "
                                        "(docs/backup-and-restore.md)");
  restore->add_option("--source-key", source_key, "signing.pub of the control plane that made it")
      ->required();
  restore->add_option("backup", backup, "the backup document (JSON)")->required();
  restore->callback([&] { chosen = [&] { return command_restore(config, source_key, backup); }; });
  auto* copy = app.add_subcommand("migrate-store", "copy a SQLite installation into a PostgreSQL "
                                                   "store (docs/operations.md)");
  copy->add_option("--from", from, "sqlite:<dataDir>")->required();
  copy->add_option("--to", to, "postgresql://…")->required();
  copy->add_option("--password-file", password_file, "the PostgreSQL password, if the URL has none");
  copy->callback([&] {
    chosen = [&] {
      return command_migrate_store(from, to, password_file.empty()
                                                 ? std::nullopt
                                                 : std::optional<std::filesystem::path>(password_file));
    };
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return chosen();
}
