#pragma once
// What a change does to each attribute of one resource (or Output), read from the change object
// of `tofu show -json` (resource_changes[].change, resource_drift[].change, output_changes.NAME):
// before, after, after_unknown, before_sensitive, after_sensitive, replace_paths. Nested objects
// and lists are flattened to the leaves that differ, each under its path (`tags.env`,
// `ingress[0].cidr_blocks[1]`, `labels["app.kubernetes.io/name"]`). A value is rendered as one
// line of JSON, so no value can begin a line of its own; a sensitive one is never rendered
// (kSensitive), an unknown one reads kUnknown. Pure functions.
#include <boost/json/object.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/plan_view.hpp"  // the markers

namespace takosumi::runner {

inline constexpr std::string_view kSensitive = protocol::kSensitiveValue;
inline constexpr std::string_view kUnknown = protocol::kUnknownValue;

struct AttributeChange {
  enum class Kind { added, removed, changed };
  std::string path;
  Kind kind = Kind::changed;
  std::string before;  // empty for added
  std::string after;   // empty for removed
  bool forces_replacement = false;
  bool sensitive = false;  // before or after is kSensitive
};

// The leaves that differ between before and after, in path order of after then before. At most
// max_changes (the caller says when there were more: `truncated`).
std::vector<AttributeChange> attribute_changes(const boost::json::object& change,
                                               std::size_t max_changes, bool* truncated = nullptr);

// A JSON value as one line (strings quoted and escaped, containers compact).
std::string render_value(const boost::json::value& v);

}  // namespace takosumi::runner
