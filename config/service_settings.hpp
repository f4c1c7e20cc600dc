#pragma once
// The settings an agent has as a host service, beside its Runs: how it logs, whether it takes one
// Run and leaves (ephemeral), where it serves metrics and health, and the operator's hooks around
// plan and apply (docs/configuration.md).
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "common/error.hpp"

namespace takosumi::config {

enum class LogFormat { text, json };

// Executables run inside the Run's sandbox around its tofu commands; empty: none.
struct HooksConfig {
  std::filesystem::path pre_plan;
  std::filesystem::path post_plan;
  std::filesystem::path pre_apply;
  std::filesystem::path post_apply;
  std::chrono::seconds timeout{60};
  bool operator==(const HooksConfig&) const = default;
};

// host:port of the Prometheus and health listener; empty: off.
struct MetricsConfig {
  std::string listen;
  bool operator==(const MetricsConfig&) const = default;
};

// logLevel: trace, debug, info, warn, error, critical or off (a typo is an error, not silence).
Result<std::string> load_log_level(const YAML::Node& root);
Result<LogFormat> load_log_format(const YAML::Node& root);
// Paths must be absolute executables: a missing hook is found by --check-config, not by a Run.
Status load_hooks(const YAML::Node& root, HooksConfig& out);
Status load_metrics(const YAML::Node& root, const std::string& default_listen, MetricsConfig& out);

}  // namespace takosumi::config
