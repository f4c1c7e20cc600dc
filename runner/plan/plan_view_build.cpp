#include "runner/plan/plan_view_build.hpp"

#include <boost/json.hpp>

#include "redaction/credential_check.hpp"
#include "redaction/redaction.hpp"
#include "runner/plan/attribute_changes.hpp"
#include "runner/plan/plan_json.hpp"

namespace takosumi::runner {
namespace {

namespace json = boost::json;
using protocol::PlanAttribute;

std::string text(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

// Each entry of plan[key] (resource_changes, resource_drift) that has a change object.
template <class Visit>
void for_each_change(const json::object& plan, std::string_view key, Visit visit) {
  const auto* v = plan.if_contains(key);
  if (!v || !v->is_array()) return;
  for (const auto& entry : v->get_array()) {
    if (!entry.is_object()) continue;
    const auto* change = entry.get_object().if_contains("change");
    if (change && change->is_object()) visit(entry.get_object(), change->get_object());
  }
}

bool marked_whole(const json::object& change, std::string_view key) {
  const auto* v = change.if_contains(key);
  return v && v->is_bool() && v->get_bool();
}

// The first `keep` bytes (backed off to a UTF-8 boundary) and how long it was; at most keep + 28.
std::string cut(std::string value, std::size_t keep) {
  if (value.size() <= keep) return value;
  std::size_t at = keep;
  while (at > 0 && (static_cast<unsigned char>(value[at]) & 0xc0) == 0x80) --at;
  const auto size = value.size();
  value.resize(at);
  return value + "… (" + std::to_string(size) + " bytes)";
}

// A name cut to what the control plane takes (protocol/plan_view.hpp), the note included.
std::string bounded(std::string name, std::size_t max_bytes) { return cut(std::move(name), max_bytes - 28); }

class Redactor {
 public:
  Redactor(const redaction::SecretSet* secrets, const PlanViewLimits& limits)
      : secrets_(secrets ? *secrets : none_), limits_(limits) {}

  // Names the module chose (addresses, keys, paths): redacted as the log is, and a name holding
  // a credential's shape (a for_each key that is a token) is not shown at all.
  std::string name(const std::string& s) const {
    std::string out = redaction::redact_text(secrets_, s);
    if (redaction::credential_reason(out)) return std::string(kSensitive);
    return out;
  }

  // Why a rendered value may not be shown, if it may not: anything the log would redact (a Run
  // secret in any form, a piece of one, a credential's shape) or that looks like a credential.
  std::optional<std::string> withheld(const std::string& value) const {
    if (value == kSensitive || value == kUnknown) return std::nullopt;
    if (secrets_.contains_secret(value)) return std::string("holds a value of the Run's secrets");
    if (auto reason = redaction::credential_reason(value)) return reason;
    if (redaction::redact_text(secrets_, value) != value)
      return std::string("holds what the Run's log redacts (a piece of a Run secret or a credential)");
    return std::nullopt;
  }

  // An AttributeChange as the view shows it: secrets and credential shapes as kSensitiveValue.
  PlanAttribute attribute(const AttributeChange& c, std::string* why = nullptr) const {
    PlanAttribute a;
    a.path = bounded(name(c.path), protocol::kMaxPlanPathBytes);
    a.change = c.kind == AttributeChange::Kind::added     ? PlanAttribute::Change::add
               : c.kind == AttributeChange::Kind::removed ? PlanAttribute::Change::remove
                                                          : PlanAttribute::Change::update;
    a.sensitive = c.sensitive;
    a.forces_replacement = c.forces_replacement;
    const auto shown = [&](const std::string& value) {
      if (auto reason = withheld(value)) {
        a.sensitive = true;
        if (why && why->empty()) *why = *reason;
        return std::string(kSensitive);
      }
      return cut(value, limits_.max_value_bytes);
    };
    if (a.change != PlanAttribute::Change::add) a.before = shown(c.before);
    if (a.change != PlanAttribute::Change::remove) {
      a.after = shown(c.after);
      a.unknown = c.after == kUnknown;
    }
    return a;
  }

 private:
  static inline const redaction::SecretSet none_;
  const redaction::SecretSet& secrets_;
  const PlanViewLimits& limits_;
};

// What an entry adds to the serialised view (its comma included). Measured, not estimated:
// values are JSON text, and serialised again every quote and backslash in them doubles.
template <class Entry>
std::size_t size_of(const Entry& e) {
  return json::serialize(protocol::to_json(e)).size() + 1;
}

// The view without entries, with room for its counts and ids.
constexpr std::size_t kEnvelopeBytes = 512;

protocol::PlanResource resource_of(const json::object& entry, const json::object& change,
                                   std::vector<std::string> actions, const Redactor& redactor,
                                   const PlanViewLimits& limits) {
  protocol::PlanResource r;
  // A deposed object (left by a create_before_destroy that failed) is not the current one.
  std::string address = text(entry, "address");
  if (const std::string deposed = text(entry, "deposed"); !deposed.empty())
    address += " (deposed object " + deposed + ")";
  r.address = bounded(redactor.name(address), protocol::kMaxPlanAddressBytes);
  r.type = bounded(text(entry, "type"), 256);
  r.actions = std::move(actions);
  r.action_reason = bounded(text(entry, "action_reason"), 128);
  for (const auto& c : attribute_changes(change, limits.max_attributes_per_resource,
                                         &r.attributes_truncated))
    r.attributes.push_back(redactor.attribute(c));
  return r;
}

// Adds r while the view stays under its size; counts it as omitted after that.
void add_bounded(protocol::PlanView& view, protocol::PlanResource r, std::size_t& size,
                 const PlanViewLimits& limits) {
  if (view.resources_omitted > 0) {
    ++view.resources_omitted;
    return;
  }
  const std::size_t n = size_of(r);
  if (size + n > limits.max_bytes) {
    ++view.resources_omitted;
    return;
  }
  size += n;
  view.resources.push_back(std::move(r));
}

// Adds o; past the view's size it is still named, its values withheld.
void add_bounded(protocol::PlanView& view, protocol::PlanOutput o, std::size_t& size,
                 const PlanViewLimits& limits) {
  std::size_t n = size_of(o);
  if (size + n > limits.max_bytes) {
    o.attributes.clear();
    o.attributes_truncated = false;
    o.withheld = "too large for the plan view";
    n = size_of(o);
  }
  size += n;
  view.outputs.push_back(std::move(o));
}

protocol::PlanOutput output_of(const std::string& name, const json::object& change,
                               std::vector<std::string> actions,
                               const std::set<std::string>& mapped, const Redactor& redactor,
                               const PlanViewLimits& limits) {
  protocol::PlanOutput o;
  o.name = bounded(redactor.name(name), protocol::kMaxPlanOutputNameBytes);
  o.actions = std::move(actions);
  if (!mapped.contains(name)) {
    o.withheld = "not mapped by the Capsule";
    return o;
  }
  if (marked_whole(change, "before_sensitive") || marked_whole(change, "after_sensitive")) {
    o.withheld = std::string(protocol::kSensitiveOutputReason);
    return o;
  }
  std::string why;
  for (const auto& c : attribute_changes(change, limits.max_attributes_per_resource,
                                         &o.attributes_truncated))
    o.attributes.push_back(redactor.attribute(c, &why));
  // Like publishing, which refuses the whole Output: a mapped Output that holds a credential
  // shows none of its values.
  if (!why.empty()) {
    o.withheld = why;
    o.attributes.clear();
    o.attributes_truncated = false;
  }
  return o;
}

}  // namespace

protocol::PlanView build_plan_view(const json::object& plan, const std::set<std::string>& mapped_outputs,
                                   const redaction::SecretSet* secrets, const PlanViewLimits& limits) {
  const Redactor redactor(secrets, limits);
  protocol::PlanView view;
  std::size_t size = kEnvelopeBytes;
  for_each_change(plan, "resource_changes", [&](const json::object& entry, const json::object& change) {
    auto actions = plan_actions_of(change);
    if (!actions || changes_nothing(*actions)) return;
    add_bounded(view, resource_of(entry, change, std::move(*actions), redactor, limits), size, limits);
  });
  const auto* outputs = plan.if_contains("output_changes");
  if (outputs && outputs->is_object())
    for (const auto& kv : outputs->get_object()) {
      if (!kv.value().is_object()) continue;
      const auto& change = kv.value().get_object();
      auto actions = plan_actions_of(change);
      if (!actions || changes_nothing(*actions)) continue;
      add_bounded(view, output_of(std::string(kv.key()), change, std::move(*actions), mapped_outputs,
                                  redactor, limits),
                  size, limits);
    }
  return view;
}

protocol::PlanView build_drift_view(const json::object& plan, const redaction::SecretSet* secrets,
                                    const PlanViewLimits& limits) {
  const Redactor redactor(secrets, limits);
  protocol::PlanView view;
  std::size_t size = kEnvelopeBytes;
  for_each_change(plan, "resource_drift", [&](const json::object& entry, const json::object& change) {
    // Gone outside OpenTofu: the refreshed object is null.
    const auto* after = change.if_contains("after");
    const bool deleted = !after || after->is_null();
    std::vector<std::string> actions{deleted ? "delete" : "update"};
    add_bounded(view, resource_of(entry, change, std::move(actions), redactor, limits), size, limits);
  });
  return view;
}

}  // namespace takosumi::runner
