// The Git helper alone, for tests (the daemons run themselves as `<program> internal-git-remote`).
#include <string_view>

#include "git/helper_main.hpp"
#include "git/remote_helper.hpp"

int main(int argc, char** argv) {
  if (argc == 2 && std::string_view(argv[1]) == takosumi::git::kHelperCommand)
    return takosumi::git::git_helper_main();
  return 2;
}
