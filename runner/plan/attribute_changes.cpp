#include "runner/plan/attribute_changes.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>

namespace takosumi::runner {
namespace {

namespace json = boost::json;

const json::value kNull;

// A mark (after_unknown, *_sensitive) mirrors the value: true where it holds, an object or array
// of marks where only parts do.
bool marked(const json::value& mark) { return mark.is_bool() && mark.get_bool(); }

// Whether any part is marked: a value shown whole (a leaf that is an object or a list, when the
// other side is unknown or of another type) is hidden if a mark holds anywhere inside it. Depth
// is bounded by the JSON parser's.
bool any_marked(const json::value& mark) {
  if (mark.is_bool()) return mark.get_bool();
  if (mark.is_object())
    return std::ranges::any_of(mark.get_object(), [](const auto& kv) { return any_marked(kv.value()); });
  if (mark.is_array()) return std::ranges::any_of(mark.get_array(), any_marked);
  return false;
}

const json::value& child(const json::value& v, std::string_view key) {
  if (!v.is_object()) return kNull;
  const auto* found = v.get_object().if_contains(key);
  return found ? *found : kNull;
}

const json::value& child(const json::value& v, std::size_t index) {
  if (!v.is_array() || index >= v.get_array().size()) return kNull;
  return v.get_array()[index];
}

bool is_identifier(std::string_view key) {
  if (key.empty() || !(std::isalpha(static_cast<unsigned char>(key[0])) || key[0] == '_')) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

std::string join(const std::string& path, std::string_view key) {
  if (is_identifier(key)) return path.empty() ? std::string(key) : path + "." + std::string(key);
  return path + "[" + json::serialize(json::string(key)) + "]";
}

struct Side {
  const json::value& value;
  const json::value& sensitive;
  const json::value& unknown;  // kNull for before
};

// A JSON path array of replace_paths ([ "tags", "env" ] or [ "ingress", 0 ]) in our notation.
std::string path_of(const json::array& steps) {
  std::string out;
  for (const auto& step : steps) {
    if (step.is_string())
      out = join(out, step.get_string());
    else if (step.is_int64() || step.is_uint64())
      out += "[" + json::serialize(step) + "]";
  }
  return out;
}

class Walker {
 public:
  Walker(std::vector<std::string> replace, std::size_t max) : replace_(std::move(replace)), max_(max) {}

  void walk(const std::string& path, const Side& before, const Side& after) {
    if (truncated_) return;  // a change past max_ was found: the caller says there are more
    const bool hidden = marked(before.sensitive) || marked(after.sensitive);
    const bool unknown = marked(after.unknown);
    const auto object_or_null = [](const json::value& v) { return v.is_object() || v.is_null(); };
    const auto array_or_null = [](const json::value& v) { return v.is_array() || v.is_null(); };
    const bool both_null = before.value.is_null() && after.value.is_null();
    if (!hidden && !unknown && !both_null) {
      if (object_or_null(before.value) && object_or_null(after.value)) {
        walk_object(path, before, after);
        return;
      }
      if (array_or_null(before.value) && array_or_null(after.value)) {
        walk_array(path, before, after);
        return;
      }
    }
    leaf(path, before, after, hidden, unknown);
  }

  std::vector<AttributeChange> take() { return std::move(out_); }
  bool truncated() const { return truncated_; }

 private:
  // Each key once, after's first. An object's own keys are unique, so a key of a later side is
  // only looked up (hashed) in the sides before it: linear in the keys, whatever the module's map.
  void walk_object(const std::string& path, const Side& before, const Side& after) {
    const auto object_of = [](const json::value& v) { return v.is_object() ? &v.get_object() : nullptr; };
    const json::object* a = object_of(after.value);
    const json::object* b = object_of(before.value);
    // An unknown attribute is listed in after_unknown only, not in after.
    const json::object* u = object_of(after.unknown);
    const auto in = [](const json::object* o, std::string_view key) { return o && o->contains(key); };
    const auto visit = [&](std::string_view key) {
      walk(join(path, key), Side{child(before.value, key), child(before.sensitive, key), kNull},
           Side{child(after.value, key), child(after.sensitive, key), child(after.unknown, key)});
    };
    if (a)
      for (const auto& kv : *a) visit(kv.key());
    if (b)
      for (const auto& kv : *b)
        if (!in(a, kv.key())) visit(kv.key());
    if (u)
      for (const auto& kv : *u)
        if (!in(a, kv.key()) && !in(b, kv.key())) visit(kv.key());
  }

  void walk_array(const std::string& path, const Side& before, const Side& after) {
    const auto size = [](const json::value& v) { return v.is_array() ? v.get_array().size() : 0; };
    const std::size_t n = std::max({size(before.value), size(after.value), size(after.unknown)});
    if (n == 0) {
      leaf(path, before, after, false, false);
      return;
    }
    for (std::size_t i = 0; i < n; ++i)
      walk(path + "[" + std::to_string(i) + "]",
           Side{child(before.value, i), child(before.sensitive, i), kNull},
           Side{child(after.value, i), child(after.sensitive, i), child(after.unknown, i)});
  }

  void leaf(const std::string& path, const Side& before, const Side& after, bool hidden, bool unknown) {
    const bool had = !before.value.is_null() || marked(before.sensitive);
    const bool has = !after.value.is_null() || unknown || marked(after.sensitive);
    if (!had && !has) return;
    if (!hidden && !unknown && before.value == after.value) return;
    // A sensitive value that is the same before and after: nothing to show, nothing to review.
    if (hidden && !unknown && marked(before.sensitive) && marked(after.sensitive) &&
        before.value == after.value)
      return;
    if (out_.size() >= max_) {
      truncated_ = true;
      return;
    }
    AttributeChange c;
    c.path = path;
    c.kind = !had ? AttributeChange::Kind::added
                  : !has ? AttributeChange::Kind::removed : AttributeChange::Kind::changed;
    // Sensitive on either side hides both, as tofu does: the unmarked side of a value that
    // becomes sensitive is the secret's current value.
    const bool hide_before = hidden || any_marked(before.sensitive);
    const bool hide_after = hidden || any_marked(after.sensitive);
    const auto shown = [](const Side& s, bool hide, bool is_unknown) {
      if (hide) return std::string(kSensitive);
      if (is_unknown) return std::string(kUnknown);
      return render_value(s.value);
    };
    if (had) c.before = shown(before, hide_before, false);
    if (has) c.after = shown(after, hide_after, unknown);
    c.sensitive = (had && hide_before) || (has && hide_after);
    c.forces_replacement = std::any_of(replace_.begin(), replace_.end(), [&](const std::string& p) {
      return path == p || (path.starts_with(p) && (path[p.size()] == '.' || path[p.size()] == '['));
    });
    out_.push_back(std::move(c));
  }

  std::vector<std::string> replace_;
  std::size_t max_;
  std::vector<AttributeChange> out_;
  bool truncated_ = false;
};

}  // namespace

std::string render_value(const json::value& v) {
  // boost::json escapes control characters and newlines inside strings: one line, always.
  return json::serialize(v);
}

std::vector<AttributeChange> attribute_changes(const json::object& change, std::size_t max_changes,
                                               bool* truncated) {
  std::vector<std::string> replace;
  if (const auto* paths = change.if_contains("replace_paths"); paths && paths->is_array())
    for (const auto& p : paths->get_array())
      if (p.is_array()) replace.push_back(path_of(p.get_array()));
  const auto field = [&](std::string_view key) -> const json::value& {
    const auto* v = change.if_contains(key);
    return v ? *v : kNull;
  };
  Walker walker(std::move(replace), max_changes);
  walker.walk("", Side{field("before"), field("before_sensitive"), kNull},
              Side{field("after"), field("after_sensitive"), field("after_unknown")});
  if (truncated) *truncated = walker.truncated();
  return walker.take();
}

}  // namespace takosumi::runner
