#include "runner/policy/tf_json_scan.hpp"

#include <boost/json/basic_parser_impl.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/error_codes.hpp"

namespace takosumi::runner {
namespace {

namespace json = boost::json;

constexpr int kMaxDepth = 64;

// A JSON document with the line of every object member; boost::json::value keeps no positions.
struct JsonNode {
  enum class Kind : unsigned char { object, array, string, other };
  Kind kind = Kind::other;
  int line = 0;
  std::string key;   // the member name, when the parent is an object
  std::string text;  // a string's value
  std::vector<JsonNode> children;
};

// basic_parser handler building JsonNodes; the caller feeds one line at a time and sets line.
class TreeBuilder {
 public:
  static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);

  int line = 1;
  std::string problem;  // why the handler stopped the parse
  std::optional<JsonNode> root;

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_object_begin(json::error_code&) { return open(JsonNode::Kind::object); }
  bool on_object_end(std::size_t, json::error_code&) { return close(); }
  bool on_array_begin(json::error_code&) { return open(JsonNode::Kind::array); }
  bool on_array_end(std::size_t, json::error_code&) { return close(); }
  bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
    key_.append(s.data(), s.size());
    return true;
  }
  bool on_key(json::string_view s, std::size_t, json::error_code& ec) {
    key_.append(s.data(), s.size());
    if (!frames_.back().keys.insert(key_).second) {
      problem = "line " + std::to_string(line) + ": key \"" + key_.substr(0, 64) +
                "\" appears twice in one object";
      ec = json::error::syntax;
      return false;
    }
    pending_key_ = std::move(key_);
    key_.clear();
    key_line_ = line;
    return true;
  }
  bool on_string_part(json::string_view s, std::size_t, json::error_code&) {
    text_.append(s.data(), s.size());
    return true;
  }
  bool on_string(json::string_view s, std::size_t, json::error_code&) {
    text_.append(s.data(), s.size());
    JsonNode node{JsonNode::Kind::string};
    node.text = std::move(text_);
    text_.clear();
    return place(std::move(node));
  }
  bool on_number_part(json::string_view, json::error_code&) { return true; }
  bool on_int64(std::int64_t, json::string_view, json::error_code&) { return place({}); }
  bool on_uint64(std::uint64_t, json::string_view, json::error_code&) { return place({}); }
  bool on_double(double, json::string_view, json::error_code&) { return place({}); }
  bool on_bool(bool, json::error_code&) { return place({}); }
  bool on_null(json::error_code&) { return place({}); }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }

 private:
  struct Frame {
    JsonNode node;
    std::unordered_set<std::string> keys;
  };

  void name(JsonNode& node) {
    if (!frames_.empty() && frames_.back().node.kind == JsonNode::Kind::object) {
      node.key = std::move(pending_key_);
      node.line = key_line_;
    } else {
      node.line = line;
    }
  }
  bool open(JsonNode::Kind kind) {
    JsonNode node{kind};
    name(node);
    frames_.push_back(Frame{std::move(node), {}});
    return true;
  }
  bool close() {
    JsonNode node = std::move(frames_.back().node);
    frames_.pop_back();
    attach(std::move(node));
    return true;
  }
  bool place(JsonNode node) {
    name(node);
    attach(std::move(node));
    return true;
  }
  void attach(JsonNode node) {
    if (frames_.empty()) {
      root = std::move(node);
      return;
    }
    auto& parent = frames_.back().node;
    // Scalars inside arrays are attribute values the scan never reads; dropping them keeps a
    // 4 MiB array of numbers from costing hundreds of megabytes.
    if (parent.kind == JsonNode::Kind::array && node.kind != JsonNode::Kind::object &&
        node.kind != JsonNode::Kind::array)
      return;
    parent.children.push_back(std::move(node));
  }

  std::vector<Frame> frames_;
  std::string key_;
  std::string text_;
  std::string pending_key_;
  int key_line_ = 0;
};

std::unexpected<Error> invalid(int line, std::string_view what) {
  return fail(errc::kInvalidArgument, "line " + std::to_string(line) + ": " + std::string(what));
}

Result<JsonNode> parse_tree(std::string_view text) {
  json::parse_options options;
  options.max_depth = kMaxDepth;
  json::basic_parser<TreeBuilder> parser(options);
  json::error_code ec;
  std::size_t pos = 0;
  int line = 1;
  // Fed line by line so that the handler knows the line of each key it sees.
  while (pos < text.size() && !parser.done()) {
    const auto eol = text.find('\n', pos);
    const std::size_t end = eol == std::string_view::npos ? text.size() : eol + 1;
    parser.handler().line = line;
    pos += parser.write_some(true, text.data() + pos, end - pos, ec);
    if (ec) break;
    if (pos == end) ++line;
  }
  if (!ec && !parser.done()) parser.write_some(false, nullptr, 0, ec);
  if (ec) {
    if (!parser.handler().problem.empty())
      return fail(errc::kInvalidArgument, parser.handler().problem);
    return invalid(line, "invalid JSON (" + ec.message() + ")");
  }
  if (text.find_first_not_of(" \t\r\n", pos) != std::string_view::npos)
    return invalid(line, "text after the JSON object");
  if (!parser.handler().root || parser.handler().root->kind != JsonNode::Kind::object)
    return invalid(1, "the file must hold one JSON object");
  return std::move(*parser.handler().root);
}

// The blocks the scan reads, by the type of the block they are in ("" is the file), and how
// many labels they have. Every other member is an attribute.
std::optional<int> block_labels(std::string_view parent, std::string_view key) {
  if (parent.empty()) {
    if (key == "terraform" || key == "import" || key == "removed") return 0;
    if (key == "module" || key == "provider" || key == "check") return 1;
    if (key == "resource" || key == "data" || key == "ephemeral") return 2;
    return std::nullopt;
  }
  if (parent == "terraform" && (key == "required_providers" || key == "encryption" ||
                                key == "cloud"))
    return 0;
  if (parent == "terraform" && key == "backend") return 1;
  if (key == "provisioner" && (parent == "resource" || parent == "data" ||
                               parent == "ephemeral" || parent == "removed"))
    return 1;
  if (parent == "check" && key == "data") return 2;
  return std::nullopt;
}

ConfigValue scalar_of(const JsonNode& node) {
  if (node.kind == JsonNode::Kind::string) return ConfigValue{ValueKind::string, node.text, {}};
  if (node.kind == JsonNode::Kind::object) return ConfigValue{ValueKind::object, {}, {}};
  return ConfigValue{};
}

ConfigValue value_of(const JsonNode& node) {
  ConfigValue v = scalar_of(node);
  if (node.kind == JsonNode::Kind::object)
    for (const auto& member : node.children) v.items.push_back({member.key, scalar_of(member)});
  return v;
}

Status convert_body(const JsonNode& object, std::string_view type, ConfigBody& out, int depth);

// One level of a block's JSON form: arrays hold alternatives, objects hold labels until none are
// left, then the body.
Status add_blocks(const JsonNode& node, const std::string& type, int labels_left,
                  std::vector<std::string> labels, int line, ConfigBody& out, int depth) {
  if (depth > kMaxDepth) return invalid(line, "nested too deeply");
  if (node.kind == JsonNode::Kind::array) {
    for (const auto& element : node.children)
      TAKOSUMI_TRY(add_blocks(element, type, labels_left, labels, element.line, out, depth + 1));
    return {};
  }
  if (node.kind != JsonNode::Kind::object)
    return invalid(line, "\"" + type.substr(0, 64) + "\" must be an object or an array of objects");
  if (labels_left == 0) {
    ConfigBlock block{type, std::move(labels), line, {}};
    TAKOSUMI_TRY(convert_body(node, type, block.body, depth + 1));
    out.blocks.push_back(std::move(block));
    return {};
  }
  for (const auto& member : node.children) {
    auto more = labels;
    more.push_back(member.key);
    TAKOSUMI_TRY(add_blocks(member, type, labels_left - 1, std::move(more), member.line, out,
                            depth + 1));
  }
  return {};
}

Status convert_body(const JsonNode& object, std::string_view type, ConfigBody& out, int depth) {
  for (const auto& member : object.children) {
    if (auto labels = block_labels(type, member.key))
      TAKOSUMI_TRY(add_blocks(member, member.key, *labels, {}, member.line, out, depth));
    else
      out.attributes.push_back({member.key, member.line, value_of(member)});
  }
  return {};
}

}  // namespace

Result<ConfigBody> parse_tf_json(std::string_view text) {
  auto tree = parse_tree(text);
  if (!tree) return std::unexpected(tree.error());
  ConfigBody body;
  TAKOSUMI_TRY(convert_body(*tree, "", body, 0));
  return body;
}

}  // namespace takosumi::runner
