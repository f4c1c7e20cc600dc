#include "cli/yaml_json.hpp"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <iostream>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"

namespace takosumi::cli {
namespace {

constexpr std::size_t kMaxFile = 4 << 20;

bool is_one_of(const std::string& text, std::initializer_list<const char*> words) {
  for (const char* w : words)
    if (text == w) return true;
  return false;
}

bool looks_like_integer(const std::string& text) {
  std::size_t i = (text[0] == '-' || text[0] == '+') ? 1 : 0;
  if (i == text.size()) return false;
  for (; i < text.size(); ++i)
    if (text[i] < '0' || text[i] > '9') return false;
  return true;
}

// YAML 1.2's core schema for plain scalars, without its NaN and infinities (JSON has none); an
// integer too large for 64 bits stays the text it was rather than losing digits as a double.
boost::json::value scalar(const YAML::Node& node) {
  const std::string& text = node.Scalar();
  // Quoted, or tagged !!str: a string, whatever it holds.
  if (node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str") return boost::json::value(text);
  if (text.empty() || is_one_of(text, {"null", "Null", "NULL", "~"})) return nullptr;
  if (is_one_of(text, {"true", "True", "TRUE"})) return true;
  if (is_one_of(text, {"false", "False", "FALSE"})) return false;
  if (looks_like_integer(text)) {
    std::int64_t i = 0;
    const char* begin = text.data() + (text[0] == '+' ? 1 : 0);
    if (auto [end, ec] = std::from_chars(begin, text.data() + text.size(), i);
        ec == std::errc() && end == text.data() + text.size())
      return i;
    return boost::json::value(text);
  }
  const bool numeric = text.find_first_not_of("0123456789+-.eE") == std::string::npos;
  double d = 0;
  if (auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
      numeric && ec == std::errc() && end == text.data() + text.size() && std::isfinite(d))
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
    char buf[65536];
    while (std::cin.read(buf, sizeof buf) || std::cin.gcount() > 0) {
      text.append(buf, static_cast<std::size_t>(std::cin.gcount()));
      if (text.size() > kMaxFile)
        return fail(errc::kConfigInvalid, "stdin: more than " + std::to_string(kMaxFile) + " bytes");
    }
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
