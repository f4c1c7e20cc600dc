#include "config/yaml_fields.hpp"

#include <algorithm>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"

namespace takosumi::config {

std::filesystem::path config_path(const std::filesystem::path& base, const std::string& p) {
  std::filesystem::path path(p);
  return path.is_absolute() ? path : base / path;
}
namespace {

std::string key_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

}  // namespace

Result<std::string> yaml_string(const YAML::Node& parent, const std::string& key,
                                const std::string& path, const std::string& fallback) {
  const YAML::Node node = parent[key];
  if (!node || node.IsNull()) return fallback;
  if (!node.IsScalar())
    return fail(errc::kConfigInvalid, key_path(path, key) + " must be a string");
  return node.Scalar();
}

Result<std::int64_t> yaml_int(const YAML::Node& parent, const std::string& key,
                              const std::string& path, std::int64_t fallback, std::int64_t min,
                              std::int64_t max) {
  const YAML::Node node = parent[key];
  if (!node || node.IsNull()) return fallback;
  std::int64_t v = 0;
  if (!node.IsScalar() || !YAML::convert<std::int64_t>::decode(node, v))
    return fail(errc::kConfigInvalid, key_path(path, key) + " must be an integer");
  if (v < min || v > max)
    return fail(errc::kConfigInvalid, key_path(path, key) + " must be between " +
                                          std::to_string(min) + " and " + std::to_string(max));
  return v;
}

Result<bool> yaml_bool(const YAML::Node& parent, const std::string& key, const std::string& path,
                       bool fallback) {
  const YAML::Node node = parent[key];
  if (!node || node.IsNull()) return fallback;
  bool v = false;
  if (!node.IsScalar() || !YAML::convert<bool>::decode(node, v))
    return fail(errc::kConfigInvalid, key_path(path, key) + " must be true or false");
  return v;
}

Result<std::vector<std::string>> yaml_strings(const YAML::Node& parent, const std::string& key,
                                              const std::string& path) {
  std::vector<std::string> out;
  const YAML::Node node = parent[key];
  if (!node || node.IsNull()) return out;
  if (!node.IsSequence())
    return fail(errc::kConfigInvalid, key_path(path, key) + " must be a list of strings");
  for (const auto& item : node) {
    if (!item.IsScalar())
      return fail(errc::kConfigInvalid, key_path(path, key) + " must be a list of strings");
    out.push_back(item.Scalar());
  }
  return out;
}

Status yaml_known_keys(const YAML::Node& map, const std::vector<std::string>& allowed,
                       const std::string& path) {
  if (!map || map.IsNull()) return {};
  if (!map.IsMap())
    return fail(errc::kConfigInvalid, (path.empty() ? "the document" : path) + " must be a mapping");
  for (const auto& kv : map) {
    const auto key = kv.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      return fail(errc::kConfigInvalid, "unknown key " + key_path(path, key));
  }
  return {};
}

Result<YAML::Node> yaml_load_file(const std::string& file) {
  auto text = read_file(file, 1 << 20);
  if (!text) return std::unexpected(text.error().with_context("config"));
  try {
    return YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    return fail(errc::kConfigInvalid, file + ": line " + std::to_string(e.mark.line + 1) +
                                          ", column " + std::to_string(e.mark.column + 1) +
                                          ": " + e.msg);
  }
}

}  // namespace takosumi::config
