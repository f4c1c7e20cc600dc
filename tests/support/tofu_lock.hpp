#pragma once
// Test-only: the dependency lock file the real `tofu init` writes for a module against a
// filesystem mirror, so hashes and pins are checked against OpenTofu's own, not a copy of our
// computation.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include "tests/support/test_paths.hpp"

namespace takosumi::testing {

inline std::string tofu_lock_file(const std::filesystem::path& dir, std::string_view main_tf,
                                  const std::filesystem::path& mirror) {
  const auto module = dir / "lock-module";
  std::filesystem::create_directories(module);
  std::ofstream(module / "main.tf") << main_tf;
  std::ofstream(dir / "lock-cli.tfrc") << "provider_installation {\n  filesystem_mirror {\n"
                                       << "    path = \"" << mirror.string() << "\"\n  }\n}\n";
  const auto log = dir / "lock-init.log";
  const std::string command = "cd '" + module.string() + "' && TF_CLI_CONFIG_FILE='" +
                              (dir / "lock-cli.tfrc").string() + "' TF_DATA_DIR='" +
                              (dir / "lock-data").string() + "' '" + test_paths::tofu +
                              "' init -backend=false -input=false > '" + log.string() + "' 2>&1";
  const auto read = [](const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  EXPECT_EQ(std::system(command.c_str()), 0) << read(log);
  return read(module / ".terraform.lock.hcl");
}

}  // namespace takosumi::testing
