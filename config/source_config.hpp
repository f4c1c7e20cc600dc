#pragma once
// The agent's `source:` section: where a Run's repository may come from and how it is fetched
// (docs/configuration.md "source"). Local repositories are off unless fileRoots lists them.
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "common/error.hpp"

namespace takosumi::config {

struct SourceConfig {
  // file:// sources only beneath these (links resolved); none: local repositories are refused.
  std::vector<std::filesystem::path> file_roots;
  std::chrono::seconds fetch_timeout{300};  // one fetch, also bounded by the Run's own limit
  std::uint64_t max_fetch_mib = 1024;       // received pack data beyond this fails the fetch
  std::filesystem::path ca_file;            // https: CAs to trust besides the system's
  // Sources on loopback, link-local or multicast addresses (a Git server on this machine).
  bool allow_loopback_hosts = false;
};

// Relative paths are taken from `base` (the configuration file's directory). config_invalid
// naming the field.
Status load_source(const YAML::Node& root, const std::filesystem::path& base, SourceConfig& out);

}  // namespace takosumi::config
