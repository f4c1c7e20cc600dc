#include "config/service_settings.hpp"

#include <arpa/inet.h>
#include <unistd.h>

#include <array>
#include <string_view>

#include "common/error_codes.hpp"
#include "config/yaml_fields.hpp"

namespace takosumi::config {

Result<std::string> load_log_level(const YAML::Node& root) {
  auto level = yaml_string(root, "logLevel", "", "info");
  if (!level) return level;
  static constexpr std::array<std::string_view, 7> kLevels{"trace", "debug", "info",    "warn",
                                                           "error", "critical", "off"};
  for (auto known : kLevels)
    if (*level == known) return level;
  return fail(errc::kConfigInvalid, "logLevel must be one of trace, debug, info, warn, error, "
                                    "critical, off (got \"" + *level + "\")");
}

Result<LogFormat> load_log_format(const YAML::Node& root) {
  auto format = yaml_string(root, "logFormat", "", "text");
  if (!format) return std::unexpected(format.error());
  if (*format == "text") return LogFormat::text;
  if (*format == "json") return LogFormat::json;
  return fail(errc::kConfigInvalid, "logFormat must be text or json (got \"" + *format + "\")");
}

Status load_hooks(const YAML::Node& root, HooksConfig& out) {
  const YAML::Node hooks = root["hooks"];
  if (!hooks || hooks.IsNull()) return {};
  TAKOSUMI_TRY(yaml_known_keys(
      hooks, {"prePlan", "postPlan", "preApply", "postApply", "timeoutSeconds"}, "hooks"));
  auto timeout = yaml_int(hooks, "timeoutSeconds", "hooks", 60, 1, 3600);
  if (!timeout) return std::unexpected(timeout.error());
  out.timeout = std::chrono::seconds(*timeout);
  const std::pair<const char*, std::filesystem::path*> slots[] = {
      {"prePlan", &out.pre_plan},
      {"postPlan", &out.post_plan},
      {"preApply", &out.pre_apply},
      {"postApply", &out.post_apply}};
  for (const auto& [key, path] : slots) {
    auto value = yaml_string(hooks, key, "hooks", "");
    if (!value) return std::unexpected(value.error());
    if (value->empty()) continue;
    const std::string name = std::string("hooks.") + key;
    if (value->front() != '/')
      return fail(errc::kConfigInvalid, name + " must be an absolute path (got \"" + *value + "\")");
    if (::access(value->c_str(), X_OK) != 0)
      return fail(errc::kConfigInvalid, name + ": " + *value + " is not an executable file");
    *path = *value;
  }
  return {};
}

namespace {

// "127.0.0.1:9464", "[::1]:9464", "localhost:9464": what the listener binds (no name lookup).
bool is_ip_and_port(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size()) return false;
  const std::string port = text.substr(colon + 1);
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port) > 65535)
    return false;
  std::string host = text.substr(0, colon);
  if (host == "localhost") return true;
  unsigned char address[16];
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    return ::inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), address) == 1;
  return ::inet_pton(AF_INET, host.c_str(), address) == 1;
}

}  // namespace

Status load_metrics(const YAML::Node& root, const std::string& default_listen, MetricsConfig& out) {
  const YAML::Node metrics = root["metrics"];
  out.listen = default_listen;
  if (!metrics || metrics.IsNull()) return {};
  TAKOSUMI_TRY(yaml_known_keys(metrics, {"listen"}, "metrics"));
  auto listen = yaml_string(metrics, "listen", "metrics", default_listen);
  if (!listen) return std::unexpected(listen.error());
  if (*listen == "off") listen->clear();
  if (!listen->empty() && !is_ip_and_port(*listen))
    return fail(errc::kConfigInvalid,
                "metrics.listen must be an IP address and a port, e.g. 127.0.0.1:9464 or "
                "[::1]:9464, or off (got \"" + *listen + "\")");
  out.listen = *listen;
  return {};
}

}  // namespace takosumi::config
