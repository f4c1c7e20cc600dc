#include "runner/plan/plan_render.hpp"

#include <boost/json.hpp>

#include <algorithm>

#include "runner/plan/attribute_changes.hpp"
#include "runner/plan/plan_json.hpp"

namespace takosumi::runner {
namespace {

namespace json = boost::json;

bool has(const std::vector<std::string>& actions, std::string_view a) {
  return std::find(actions.begin(), actions.end(), a) != actions.end();
}

// The symbol and the words OpenTofu's own plan uses for an action list.
std::pair<std::string, std::string> describe(const std::vector<std::string>& actions) {
  const bool create = has(actions, "create"), del = has(actions, "delete");
  if (create && del)
    return {actions.front() == "delete" ? "-/+" : "+/-", "must be replaced"};
  if (has(actions, "forget")) return {".", create ? "will be forgotten and created again" : "will be forgotten (left in place)"};
  if (create) return {"+", "will be created"};
  if (del) return {"-", "will be destroyed"};
  if (has(actions, "update")) return {"~", "will be updated in place"};
  if (has(actions, "read")) return {"<=", "will be read during apply"};
  return {" ", "is unchanged"};
}

std::string symbol_of(AttributeChange::Kind kind) {
  switch (kind) {
    case AttributeChange::Kind::added: return "+";
    case AttributeChange::Kind::removed: return "-";
    case AttributeChange::Kind::changed: return "~";
  }
  return "~";
}

std::string line_of(const AttributeChange& c, const std::string& name) {
  std::string value;
  switch (c.kind) {
    case AttributeChange::Kind::added: value = c.after; break;
    case AttributeChange::Kind::removed: value = c.before; break;
    case AttributeChange::Kind::changed: value = c.before + " -> " + c.after; break;
  }
  return "      " + symbol_of(c.kind) + " " + name + " = " + value +
         (c.forces_replacement ? "  # forces replacement" : "");
}

std::string text(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

// Collects lines up to the limit; what does not fit is counted.
class Lines {
 public:
  explicit Lines(std::size_t max) : max_(max) {}
  void add(std::string line) {
    if (out_.size() < max_)
      out_.push_back(one_line(std::move(line)));
    else
      ++left_out_;
  }
  std::vector<std::string> take() {
    if (left_out_ > 0)
      out_.push_back("  … " + std::to_string(left_out_) +
                     " more lines not shown (the Run's resourceChanges in the API hold every change)");
    return std::move(out_);
  }

 private:
  std::size_t max_;
  std::size_t left_out_ = 0;
  std::vector<std::string> out_;
};

void render_resource(const json::object& rc, const PlanRenderLimits& limits, Lines& lines,
                     std::string_view drift_words = {}) {
  const auto* change_v = rc.if_contains("change");
  if (!change_v || !change_v->is_object()) return;
  const auto& change = change_v->get_object();
  auto actions = plan_actions_of(change);
  // A plan lists what changes (as the summary counts it); drift lists every entry there is.
  if (!actions || (drift_words.empty() && changes_nothing(*actions))) return;
  const std::string address = text(rc, "address");
  auto [symbol, words] = describe(*actions);
  if (!drift_words.empty()) {
    symbol = "~";
    words = std::string(drift_words);
  }
  lines.add("  # " + address + " " + words);
  if (const auto reason = text(rc, "action_reason"); !reason.empty() && drift_words.empty())
    lines.add("  #   (" + reason + ")");
  lines.add("  " + symbol + " " + address);
  bool truncated = false;
  for (const auto& c : attribute_changes(change, limits.max_attributes_per_resource, &truncated))
    lines.add(line_of(c, c.path.empty() ? std::string("(value)") : c.path));
  if (truncated)
    lines.add("      … more attributes not shown (the Run's resourceChanges in the API hold them)");
  lines.add("");
}

const json::array* array_field(const json::object& plan, std::string_view key) {
  const auto* v = plan.if_contains(key);
  return v && v->is_array() ? &v->get_array() : nullptr;
}

}  // namespace

std::string one_line(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (const char ch : line) {
    const auto byte = static_cast<unsigned char>(ch);
    if (byte >= 0x20 && byte != 0x7f) {
      out.push_back(ch);
      continue;
    }
    static constexpr char kHex[] = "0123456789abcdef";
    out += "\\u00";
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 0xf]);
  }
  return out;
}

std::vector<std::string> render_plan(const json::object& plan, const std::set<std::string>& mapped_outputs,
                                     const PlanRenderLimits& limits) {
  Lines lines(limits.max_lines);
  if (const auto* changes = array_field(plan, "resource_changes"))
    for (const auto& rc : *changes)
      if (rc.is_object()) render_resource(rc.get_object(), limits, lines);
  const auto* outputs_v = plan.if_contains("output_changes");
  if (outputs_v && outputs_v->is_object()) {
    bool header = false;
    std::size_t unmapped = 0;
    for (const auto& kv : outputs_v->get_object()) {
      if (!kv.value().is_object()) continue;
      const auto& change = kv.value().get_object();
      auto actions = plan_actions_of(change);
      if (!actions || changes_nothing(*actions)) continue;
      if (!header) {
        lines.add("Changes to Outputs:");
        header = true;
      }
      const std::string name(kv.key());
      const auto [symbol, words] = describe(*actions);
      // Neither the name nor the value of an Output the Capsule does not publish.
      if (!mapped_outputs.contains(name)) {
        ++unmapped;
        continue;
      }
      // Every leaf that changes, by its path beneath the Output: a mapped object Output is
      // reviewed as closely as a resource.
      bool truncated = false;
      const auto attrs = attribute_changes(change, limits.max_attributes_per_resource, &truncated);
      if (attrs.empty()) lines.add("  " + symbol + " " + name);
      for (const auto& c : attrs) {
        const std::string value = c.kind == AttributeChange::Kind::added     ? c.after
                                  : c.kind == AttributeChange::Kind::removed ? c.before
                                                                             : c.before + " -> " + c.after;
        const std::string path = c.path.empty() ? std::string()
                                 : c.path.front() == '[' ? c.path
                                                         : "." + c.path;
        lines.add("  " + symbol + " " + name + path + " = " + value);
      }
      if (truncated) lines.add("      … more of " + name + " not shown");
    }
    if (unmapped > 0)
      lines.add("  (" + std::to_string(unmapped) + " more Output" + (unmapped == 1 ? "" : "s") +
                " the Capsule does not map change; not shown)");
  }
  return lines.take();
}

std::vector<std::string> render_drift(const json::object& plan, const PlanRenderLimits& limits) {
  Lines lines(limits.max_lines);
  if (const auto* drift = array_field(plan, "resource_drift"))
    for (const auto& rc : *drift)
      if (rc.is_object()) {
        // Gone outside OpenTofu: the refreshed object is null.
        const auto* change = rc.get_object().if_contains("change");
        const auto* after = change && change->is_object() ? change->get_object().if_contains("after") : nullptr;
        const bool deleted = !after || after->is_null();
        render_resource(rc.get_object(), limits, lines,
                        deleted ? "has been deleted outside OpenTofu" : "has changed outside OpenTofu");
      }
  return lines.take();
}

}  // namespace takosumi::runner
