#pragma once
// Typed access to YAML config nodes; errors are config_invalid and name the key path, so an
// operator sees exactly which line of the file to fix.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace takosumi::config {

Result<std::string> yaml_string(const YAML::Node& parent, const std::string& key,
                                const std::string& path, const std::string& fallback);
Result<std::int64_t> yaml_int(const YAML::Node& parent, const std::string& key,
                              const std::string& path, std::int64_t fallback, std::int64_t min,
                              std::int64_t max);
Result<bool> yaml_bool(const YAML::Node& parent, const std::string& key, const std::string& path,
                       bool fallback);
Result<std::vector<std::string>> yaml_strings(const YAML::Node& parent, const std::string& key,
                                              const std::string& path);
// Fails when the mapping has a key outside allowed (catches typos like "concurrancy").
Status yaml_known_keys(const YAML::Node& map, const std::vector<std::string>& allowed,
                       const std::string& path);
// A path from a configuration file: relative ones are taken from `base`, its directory.
std::filesystem::path config_path(const std::filesystem::path& base, const std::string& p);
// Loads a file into a YAML node; parse errors carry line and column.
Result<YAML::Node> yaml_load_file(const std::string& file);

}  // namespace takosumi::config
