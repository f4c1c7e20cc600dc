#include "cli/yaml_json.hpp"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <iostream>
#include <sstream>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"

namespace takosumi::cli {
namespace {

constexpr std::size_t kMaxFile = 4 << 20;

boost::json::value scalar(const YAML::Node& node) {
  const std::string& text = node.Scalar();
  if (node.Tag() == "!") return boost::json::value(text);  // quoted: a string, whatever it holds
  if (text == "null" || text == "~" || text.empty()) return nullptr;
  if (text == "true") return true;
  if (text == "false") return false;
  std::int64_t i = 0;
  if (auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
      ec == std::errc() && end == text.data() + text.size())
    return i;
  double d = 0;
  if (auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
      ec == std::errc() && end == text.data() + text.size())
    return d;
  return boost::json::value(text);
}

boost::json::value to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      boost::json::object o;
      for (const auto& kv : node) o[kv.first.as<std::string>()] = to_json(kv.second);
      return o;
    }
    case YAML::NodeType::Sequence: {
      boost::json::array a;
      for (const auto& item : node) a.push_back(to_json(item));
      return a;
    }
    case YAML::NodeType::Scalar: return scalar(node);
    default: return nullptr;
  }
}

}  // namespace

Result<boost::json::value> read_yaml_as_json(const std::filesystem::path& file) {
  std::string text;
  if (file == "-") {
    std::ostringstream in;
    in << std::cin.rdbuf();
    text = in.str();
  } else {
    auto read = read_file(file, kMaxFile);
    if (!read) return std::unexpected(read.error());
    text = std::move(*read);
  }
  try {
    return to_json(YAML::Load(text));
  } catch (const YAML::Exception& e) {
    return fail(errc::kConfigInvalid, file.string() + ": " + e.what());
  }
}

}  // namespace takosumi::cli
