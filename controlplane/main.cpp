// takosumi-control: the reference control plane. Parses arguments and hands over.
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "git/helper_main.hpp"
#include "git/remote_helper.hpp"
#include "common/version.hpp"
#include "controlplane/commands.hpp"

namespace {

constexpr std::string_view kUsage =
    "usage: takosumi-control serve --config <control.yaml>\n"
    "       takosumi-control check-config --config <control.yaml>\n"
    "       takosumi-control migrate --config <control.yaml>\n"
    "       takosumi-control init-keys --data-dir <dir>\n"
    "       takosumi-control rotate-keys --config <control.yaml> --key storage|signing\n"
    "       takosumi-control restore --config <control.yaml> --source-key <signing.pub> "
    "<backup.json>\n"
    "       takosumi-control migrate-store --from sqlite:<dataDir> --to postgresql://… "
    "[--password-file <file>]\n"
    "       takosumi-control --version\n";

int usage() {
  std::cerr << kUsage;
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // takosumi-control as its own Git helper (git/remote_helper.hpp): a ref listing or a source
  // fetch that a deadline can end.
  if (argc == 2 && std::string_view(argv[1]) == takosumi::git::kHelperCommand)
    return takosumi::git::git_helper_main();
  if (argc == 2 && std::string_view(argv[1]) == "--version") {
    std::cout << "takosumi-control " << TAKOSUMI_VERSION << "\n";
    return 0;
  }
  using namespace takosumi::controlplane;
  if (argc == 7 && std::string_view(argv[1]) == "restore" &&
      std::string_view(argv[2]) == "--config" && std::string_view(argv[4]) == "--source-key")
    return command_restore(argv[3], argv[5], argv[6]);
  if (argc >= 2 && std::string_view(argv[1]) == "migrate-store") {
    std::map<std::string, std::string> flags;
    for (int i = 2; i + 1 < argc; i += 2) {
      const std::string flag = argv[i];
      if ((flag != "--from" && flag != "--to" && flag != "--password-file") ||
          !flags.emplace(flag, argv[i + 1]).second)
        return usage();
    }
    if (argc % 2 != 0 || !flags.contains("--from") || !flags.contains("--to")) return usage();
    std::optional<std::filesystem::path> password_file;
    if (auto it = flags.find("--password-file"); it != flags.end()) password_file = it->second;
    return command_migrate_store(flags["--from"], flags["--to"], password_file);
  }
  if (argc == 6 && std::string_view(argv[1]) == "rotate-keys" &&
      std::string_view(argv[2]) == "--config" && std::string_view(argv[4]) == "--key") {
    const std::string_view key = argv[5];
    if (key != "storage" && key != "signing") return usage();
    return command_rotate_keys(argv[3], key == "storage" ? RotatedKey::storage : RotatedKey::signing);
  }
  if (argc != 4) return usage();
  const std::string_view command = argv[1], flag = argv[2];
  const std::string value = argv[3];
  if (command == "serve" && flag == "--config") return command_serve(value);
  if (command == "check-config" && flag == "--config") return command_check_config(value);
  if (command == "migrate" && flag == "--config") return command_migrate(value);
  if (command == "init-keys" && flag == "--data-dir") return command_init_keys(value);
  return usage();
}
