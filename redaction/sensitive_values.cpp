#include "redaction/sensitive_values.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <iterator>
#include <string_view>
#include <utility>
#include <unordered_set>
#include <vector>

#include "redaction/json_number_text.hpp"

namespace takosumi::redaction {
namespace {

namespace json = boost::json;

// Where the values found go: a SecretSet to redact with, or a list to seal with a plan. The list
// keeps what SecretSet::add would keep, each value once: an unchanged sensitive attribute appears
// in a plan four times (before, after, prior state, planned values).
class Found {
 public:
  explicit Found(SecretSet& set) : set_(&set) {}
  explicit Found(std::vector<SecretBytes>& list) : list_(&list) {}
  void add(std::string_view value) {
    if (set_) {
      set_->add(value);
      return;
    }
    if (value.size() < kMinRedactedLength || seen_.contains(value)) return;
    list_->push_back(SecretBytes::from_string(value));
    // A view of the stored copy: its bytes stay where they are when the list grows.
    seen_.insert(list_->back().reveal_as_string());
  }

 private:
  SecretSet* set_ = nullptr;
  std::vector<SecretBytes>* list_ = nullptr;
  std::unordered_set<std::string_view> seen_;
};

const json::value* field(const json::value* v, std::string_view key) {
  return v && v->is_object() ? v->get_object().if_contains(key) : nullptr;
}

bool is_true(const json::value* v) { return v && v->is_bool() && v->get_bool(); }

void add_leaves(const json::value& v, Found& into) {
  if (v.is_string()) {
    into.add(v.get_string());
  } else if (auto number = json_number_text(v)) {
    into.add(*number);
  } else if (v.is_array()) {
    for (const auto& item : v.get_array()) add_leaves(item, into);
  } else if (v.is_object()) {
    for (const auto& kv : v.get_object()) add_leaves(kv.value(), into);
  }
}

// marks mirrors value's shape; true at a node marks its whole subtree sensitive.
void add_marked(const json::value& value, const json::value& marks, Found& into) {
  if (marks.is_bool()) {
    if (marks.get_bool()) add_leaves(value, into);
  } else if (marks.is_object() && value.is_object()) {
    for (const auto& kv : marks.get_object()) {
      const auto* v = value.get_object().if_contains(kv.key());
      if (v) add_marked(*v, kv.value(), into);
    }
  } else if (marks.is_array() && value.is_array()) {
    const auto& values = value.get_array();
    const auto& marked = marks.get_array();
    for (std::size_t i = 0; i < values.size() && i < marked.size(); ++i)
      add_marked(values[i], marked[i], into);
  }
}

void add_change(const json::value& change, Found& into) {
  for (const auto& [value_key, marks_key] : {std::pair{"before", "before_sensitive"},
                                             std::pair{"after", "after_sensitive"}}) {
    const auto* value = field(&change, value_key);
    const auto* marks = field(&change, marks_key);
    if (value && marks) add_marked(*value, *marks, into);
  }
}

void add_resource_changes(const json::value* changes, Found& into) {
  if (!changes || !changes->is_array()) return;
  for (const auto& rc : changes->get_array())
    if (const auto* change = field(&rc, "change")) add_change(*change, into);
}

// {name: {"sensitive": bool, "value": ...}}: state, `tofu output -json` and plan values alike.
void add_sensitive_outputs(const json::value* outputs, Found& into) {
  if (!outputs || !outputs->is_object()) return;
  for (const auto& kv : outputs->get_object()) {
    const auto* value = field(&kv.value(), "value");
    if (value && is_true(field(&kv.value(), "sensitive"))) add_leaves(*value, into);
  }
}

void add_module_values(const json::value* module, Found& into) {
  if (const auto* resources = field(module, "resources"); resources && resources->is_array()) {
    for (const auto& r : resources->get_array()) {
      const auto* values = field(&r, "values");
      const auto* marks = field(&r, "sensitive_values");
      if (values && marks) add_marked(*values, *marks, into);
    }
  }
  if (const auto* children = field(module, "child_modules"); children && children->is_array())
    for (const auto& child : children->get_array()) add_module_values(&child, into);
}

// The "values" representation shared by prior_state and planned_values.
void add_values(const json::value* values, Found& into) {
  add_sensitive_outputs(field(values, "outputs"), into);
  add_module_values(field(values, "root_module"), into);
}

void add_sensitive_variables(const json::value& plan, Found& into) {
  const auto* declared =
      field(field(field(&plan, "configuration"), "root_module"), "variables");
  if (!declared || !declared->is_object()) return;
  for (const auto& kv : declared->get_object()) {
    if (!is_true(field(&kv.value(), "sensitive"))) continue;
    if (const auto* value = field(field(field(&plan, "variables"), kv.key()), "value"))
      add_leaves(*value, into);
  }
}

// A cty type as JSON: "string", "number", "bool", "dynamic" or ["object", {...}], ["list", ...].
bool is_cty_type(const json::value& t) {
  constexpr std::string_view kPrimitive[] = {"string", "number", "bool", "dynamic"};
  constexpr std::string_view kCollection[] = {"object", "tuple", "list", "map", "set"};
  const auto one_of = [](const json::value& v, const auto& names) {
    return v.is_string() && std::find(std::begin(names), std::end(names), v.get_string()) !=
                                std::end(names);
  };
  if (one_of(t, kPrimitive)) return true;
  return t.is_array() && !t.get_array().empty() && one_of(t.get_array()[0], kCollection);
}

// State stores attributes of dynamic type (terraform_data's input and output) wrapped as
// {"value": ..., "type": <cty type>}; sensitive_attributes paths do not mention the wrapper.
const json::value* unwrap_dynamic(const json::value* v) {
  if (!v || !v->is_object()) return v;
  const auto& o = v->get_object();
  const auto* type = o.if_contains("type");
  return o.size() == 2 && type && is_cty_type(*type) ? o.if_contains("value") : v;
}

// One cty path step as state v4 writes it: {"type": "get_attr", "value": "name"} or
// {"type": "index", "value": {"value": 0 | "key" | <set element>, "type": ...}}.
const json::value* step_into(const json::value* node, const json::value& step) {
  const auto* type = field(&step, "type");
  const auto* key = field(&step, "value");
  if (!node || !type || !type->is_string() || !key) return nullptr;
  if (type->get_string() == "index") key = field(key, "value");
  if (!key) return nullptr;
  if (key->is_string()) {
    return field(node, key->get_string());
  }
  if (!node->is_array()) return nullptr;
  const auto& items = node->get_array();
  if (key->is_int64() || key->is_uint64()) {
    const auto index = key->to_number<std::uint64_t>();
    return index < items.size() ? &items[index] : nullptr;
  }
  for (const auto& item : items)  // a set element is addressed by its value
    if (item == *key) return &item;
  return nullptr;
}

const json::value* resolve_path(const json::value* attributes, const json::value& path) {
  if (!path.is_array()) return nullptr;
  const json::value* node = attributes;
  for (const auto& step : path.get_array()) {
    const json::value* next = nullptr;
    if (const auto* inner = unwrap_dynamic(node); inner != node) next = step_into(inner, step);
    node = next ? next : step_into(node, step);
    if (!node) return nullptr;
  }
  return unwrap_dynamic(node);
}

void add_instance(const json::value& instance, Found& into) {
  const auto* attributes = field(&instance, "attributes");
  const auto* paths = field(&instance, "sensitive_attributes");
  if (!attributes || !paths || !paths->is_array()) return;
  for (const auto& path : paths->get_array())
    if (const auto* value = resolve_path(attributes, path)) add_leaves(*value, into);
}

void add_plan_secrets(const json::value& plan, Found& into) {
  add_sensitive_variables(plan, into);
  add_resource_changes(field(&plan, "resource_changes"), into);
  add_resource_changes(field(&plan, "resource_drift"), into);
  if (const auto* outputs = field(&plan, "output_changes"); outputs && outputs->is_object())
    for (const auto& kv : outputs->get_object()) add_change(kv.value(), into);
  add_values(field(field(&plan, "prior_state"), "values"), into);
  add_values(field(&plan, "planned_values"), into);
}

}  // namespace

void collect_plan_secrets(const json::value& plan, SecretSet& into) {
  Found found(into);
  add_plan_secrets(plan, found);
}

std::vector<SecretBytes> plan_secret_values(const json::value& plan) {
  std::vector<SecretBytes> values;
  Found found(values);
  add_plan_secrets(plan, found);
  return values;
}

void collect_state_secrets(const json::value& state, SecretSet& set) {
  Found into(set);
  add_sensitive_outputs(field(&state, "outputs"), into);
  const auto* resources = field(&state, "resources");
  if (!resources || !resources->is_array()) return;
  for (const auto& resource : resources->get_array()) {
    const auto* instances = field(&resource, "instances");
    if (!instances || !instances->is_array()) continue;
    for (const auto& instance : instances->get_array()) add_instance(instance, into);
  }
}

void collect_output_secrets(const json::value& outputs, SecretSet& set) {
  Found into(set);
  add_sensitive_outputs(&outputs, into);
}

}  // namespace takosumi::redaction
