#pragma once
// The shape of one OpenTofu configuration file as the module policy scan sees it: blocks with
// labels and attributes whose values are summarised, not evaluated. Both the native syntax
// (hcl_scan.hpp) and the JSON syntax (tf_json_scan.hpp) produce it.
#include <string>
#include <vector>

namespace takosumi::runner {

enum class ValueKind {
  string,     // a literal string without template sequences (JSON: any string)
  reference,  // a traversal such as aws.west or aws.by_region[each.key]
  object,     // an object constructor { key = value, ... }
  other,      // anything else: numbers, lists, calls, templates, operators
};

struct ConfigItem;

struct ConfigValue {
  ValueKind kind = ValueKind::other;
  std::string text;  // string: the decoded value; reference: its first name ("aws")
  // object: the items with a literal key, one level deep (their own items are left empty).
  std::vector<ConfigItem> items;
};

struct ConfigItem {
  std::string key;
  ConfigValue value;
};

struct ConfigAttribute {
  std::string name;
  int line = 0;
  ConfigValue value;
};

struct ConfigBlock;

struct ConfigBody {
  std::vector<ConfigAttribute> attributes;
  std::vector<ConfigBlock> blocks;
};

struct ConfigBlock {
  std::string type;
  std::vector<std::string> labels;
  int line = 0;
  ConfigBody body;
};

}  // namespace takosumi::runner
