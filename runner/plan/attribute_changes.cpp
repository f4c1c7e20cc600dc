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
    if (out_.size() >= max_) {
      truncated_ = true;
      return;
    }
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
  void walk_object(const std::string& path, const Side& before, const Side& after) {
    std::vector<std::string> keys;
    for (const auto* side : {&after.value, &before.value})
      if (side->is_object())
        for (const auto& kv : side->get_object())
          if (std::find(keys.begin(), keys.end(), kv.key()) == keys.end()) keys.emplace_back(kv.key());
    // An unknown attribute is listed in after_unknown only, not in after.
    if (after.unknown.is_object())
      for (const auto& kv : after.unknown.get_object())
        if (std::find(keys.begin(), keys.end(), kv.key()) == keys.end()) keys.emplace_back(kv.key());
    for (const auto& key : keys)
      walk(join(path, key), Side{child(before.value, key), child(before.sensitive, key), kNull},
           Side{child(after.value, key), child(after.sensitive, key), child(after.unknown, key)});
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
    AttributeChange c;
    c.path = path;
    c.kind = !had ? AttributeChange::Kind::added
                  : !has ? AttributeChange::Kind::removed : AttributeChange::Kind::changed;
    const auto shown = [](const Side& s, bool is_unknown) {
      if (marked(s.sensitive)) return std::string(kSensitive);
      if (is_unknown) return std::string(kUnknown);
      return render_value(s.value);
    };
    if (had) c.before = shown(before, false);
    if (has) c.after = shown(after, unknown);
    c.sensitive = hidden;
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
