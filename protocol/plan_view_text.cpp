#include "protocol/plan_view_text.hpp"

#include <algorithm>
#include <utility>

namespace takosumi::protocol {
namespace {

bool has(const std::vector<std::string>& actions, std::string_view a) {
  return std::find(actions.begin(), actions.end(), a) != actions.end();
}

struct Described {
  std::string symbol;
  std::string words;
};

// The symbol and the words OpenTofu's own plan uses for an action list.
Described describe(const std::vector<std::string>& actions, bool drift) {
  const bool create = has(actions, "create"), del = has(actions, "delete");
  if (drift)
    return {"~", del ? "has been deleted outside OpenTofu" : "has changed outside OpenTofu"};
  if (create && del) return {actions.front() == "delete" ? "-/+" : "+/-", "must be replaced"};
  if (has(actions, "forget"))
    return {".", create ? "will be forgotten and created again" : "will be forgotten (left in place)"};
  if (create) return {"+", "will be created"};
  if (del) return {"-", "will be destroyed"};
  if (has(actions, "update")) return {"~", "will be updated in place"};
  if (has(actions, "read")) return {"<=", "will be read during apply"};
  return {" ", "is unchanged"};
}

class Painter {
 public:
  explicit Painter(bool colour) : colour_(colour) {}
  // tofu's colours: green creates, red destroys, yellow updates.
  std::string symbol(std::string_view s) const {
    if (!colour_ || s == " ") return std::string(s);
    if (s == "+") return paint("32", s);
    if (s == "-") return paint("31", s);
    if (s == "~") return paint("33", s);
    if (s == "-/+") return paint("31", "-") + "/" + paint("32", "+");
    if (s == "+/-") return paint("32", "+") + "/" + paint("31", "-");
    return paint("36", s);
  }
  std::string bold(std::string_view s) const { return colour_ ? paint("1", s) : std::string(s); }
  std::string dim(std::string_view s) const { return colour_ ? paint("2", s) : std::string(s); }

 private:
  static std::string paint(std::string_view code, std::string_view s) {
    return "\x1b[" + std::string(code) + "m" + std::string(s) + "\x1b[0m";
  }
  bool colour_;
};

std::string_view symbol_of(PlanAttribute::Change c) {
  switch (c) {
    case PlanAttribute::Change::add: return "+";
    case PlanAttribute::Change::remove: return "-";
    case PlanAttribute::Change::update: return "~";
  }
  return "~";
}

std::string value_of(const PlanAttribute& a) {
  switch (a.change) {
    case PlanAttribute::Change::add: return one_line(a.after.value_or(""));
    case PlanAttribute::Change::remove: return one_line(a.before.value_or(""));
    case PlanAttribute::Change::update:
      return one_line(a.before.value_or("")) + " -> " + one_line(a.after.value_or(""));
  }
  return {};
}

// Collects lines up to the limit; what does not fit is counted.
class Lines {
 public:
  explicit Lines(std::size_t max) : max_(max) {}
  void add(std::string line) {
    if (out_.size() < max_) out_.push_back(std::move(line));
    else ++left_out_;
  }
  std::vector<std::string> take() {
    if (left_out_ > 0) out_.push_back("  … " + std::to_string(left_out_) + " more lines not shown");
    return std::move(out_);
  }

 private:
  std::size_t max_;
  std::size_t left_out_ = 0;
  std::vector<std::string> out_;
};

void add_resource(const PlanResource& r, const PlanTextStyle& style, const Painter& p, Lines& lines) {
  const auto [symbol, words] = describe(r.actions, style.drift);
  const std::string address = one_line(r.address);
  lines.add("  " + p.bold("# " + address + " " + words));
  if (!r.action_reason.empty() && !style.drift) lines.add("  #   (" + one_line(r.action_reason) + ")");
  lines.add("  " + p.symbol(symbol) + " " + address);
  for (const auto& a : r.attributes)
    lines.add("      " + p.symbol(symbol_of(a.change)) + " " +
              (a.path.empty() ? std::string("(value)") : one_line(a.path)) + " = " + value_of(a) +
              (a.forces_replacement ? p.dim("  # forces replacement") : ""));
  if (r.attributes_truncated) lines.add("      … more attributes not shown");
  lines.add("");
}

void add_output(const PlanOutput& o, const Painter& p, Lines& lines) {
  const auto [symbol, words] = describe(o.actions, false);
  const std::string name = one_line(o.name);
  if (!o.withheld.empty()) {
    lines.add("  " + p.symbol(symbol) + " " + name + p.dim("  # value not shown: " + one_line(o.withheld)));
    return;
  }
  if (o.attributes.empty()) lines.add("  " + p.symbol(symbol) + " " + name);
  for (const auto& a : o.attributes) {
    const std::string path = a.path.empty()       ? std::string()
                             : a.path.front() == '[' ? one_line(a.path)
                                                     : "." + one_line(a.path);
    lines.add("  " + p.symbol(symbol) + " " + name + path + " = " + value_of(a));
  }
  if (o.attributes_truncated) lines.add("      … more of " + name + " not shown");
}

}  // namespace

namespace {

// Characters that print nothing yet change what the line shows: bidirectional controls (the
// "Trojan Source" reordering), zero-width ones, line and paragraph separators, the BOM.
bool invisible(char32_t c) {
  return c == 0x061c || (c >= 0x200b && c <= 0x200f) || (c >= 0x2028 && c <= 0x202e) ||
         (c >= 0x2060 && c <= 0x2064) || (c >= 0x2066 && c <= 0x2069) || c == 0xfeff ||
         (c >= 0xfff9 && c <= 0xfffb);
}

// The code point of the 2- or 3-byte UTF-8 sequence at text[i] and its length, else 0.
std::pair<char32_t, std::size_t> decode(std::string_view text, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const auto cont = [&](std::size_t k) { return i + k < text.size() && (b(k) & 0xc0) == 0x80; };
  if ((b(0) & 0xe0) == 0xc0 && cont(1)) return {char32_t((b(0) & 0x1f) << 6 | (b(1) & 0x3f)), 2};
  if ((b(0) & 0xf0) == 0xe0 && cont(1) && cont(2))
    return {char32_t((b(0) & 0x0f) << 12 | (b(1) & 0x3f) << 6 | (b(2) & 0x3f)), 3};
  return {0, 0};
}

}  // namespace

std::string one_line(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    char32_t code = 0;
    std::size_t length = 0;
    if (byte < 0x20 || byte == 0x7f) {
      code = byte;
      length = 1;
    } else if (byte >= 0xc0) {
      const auto [c, n] = decode(text, i);
      if (n > 0 && ((c >= 0x80 && c <= 0x9f) || invisible(c))) {
        code = c;
        length = n;
      }
    }
    if (length == 0) {
      out.push_back(text[i]);
      continue;
    }
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out.push_back(kHex[(code >> shift) & 0xf]);
    i += length - 1;
  }
  return out;
}

std::vector<std::string> plan_view_lines(const PlanView& view, const PlanTextStyle& style) {
  const Painter p(style.colour);
  Lines lines(style.max_lines);
  for (const auto& r : view.resources) add_resource(r, style, p, lines);
  if (view.resources_omitted > 0)
    lines.add("  … " + std::to_string(view.resources_omitted) +
              " more resources change: the plan view was cut at its size limit (the Run's "
              "resourceChanges name every one)");
  if (!view.outputs.empty()) {
    lines.add("Changes to Outputs:");
    for (const auto& o : view.outputs) add_output(o, p, lines);
  }
  if (!style.summary || style.drift) return lines.take();
  const auto& s = view.summary;
  // A resource only forgotten is in no count of the summary, and still a change.
  const bool resources_change = s.add + s.change + s.replace + s.destroy > 0 ||
                                !view.resources.empty() || view.resources_omitted > 0;
  if (!resources_change && view.outputs.empty()) {
    lines.add("No changes.");
    return lines.take();
  }
  lines.add("");
  lines.add(p.bold("Plan:") + " " + std::to_string(s.add) + " to add, " + std::to_string(s.change) +
            " to change, " + std::to_string(s.replace) + " to replace, " + std::to_string(s.destroy) +
            " to destroy.");
  if (!resources_change) {
    std::string names;
    for (const auto& o : view.outputs) names += (names.empty() ? "" : ", ") + one_line(o.name);
    lines.add("Only Outputs change: " + names + ".");
  }
  return lines.take();
}

}  // namespace takosumi::protocol
