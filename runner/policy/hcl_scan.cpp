#include "runner/policy/hcl_scan.hpp"

#include <array>
#include <optional>
#include <vector>

#include "common/error_codes.hpp"
#include "runner/policy/hcl_lexer.hpp"

namespace takosumi::runner {
namespace {

using K = HclTokenKind;

bool is_binary_operator(const HclToken& t) {
  if (t.kind == K::question || t.kind == K::colon) return true;
  if (t.kind != K::op) return false;
  static constexpr std::array<std::string_view, 13> kBinary{
      "+", "-", "*", "/", "%", "==", "!=", "<", ">", "<=", ">=", "&&", "||"};
  for (auto op : kBinary)
    if (t.text == op) return true;
  return false;
}

bool is_opener(K kind) {
  return kind == K::open_brace || kind == K::open_bracket || kind == K::open_paren;
}

K closer_of(K opener) {
  if (opener == K::open_brace) return K::close_brace;
  if (opener == K::open_bracket) return K::close_bracket;
  return K::close_paren;
}

bool is_closer(K kind) {
  return kind == K::close_brace || kind == K::close_bracket || kind == K::close_paren;
}

// Recursive descent over bodies, with expressions parsed only as far as needed to know where
// they end (HCL ends an attribute at a newline outside brackets) and what they are.
class Parser {
 public:
  explicit Parser(std::string_view text) : lexer_(text) {}

  Status parse_body(ConfigBody& body, int depth) {
    for (;;) {
      auto t = take();
      if (!t) return std::unexpected(t.error());
      switch (t->kind) {
        case K::newline: continue;
        case K::eof:
          if (depth == 0) return {};
          return error(*t, "end of file inside a block (a } is missing)");
        case K::close_brace:
          if (depth == 0) return error(*t, "} without a block to close");
          return {};
        case K::identifier: TAKOSUMI_TRY(parse_item(*t, body, depth)); continue;
        default: return error(*t, "expected an argument or a block");
      }
    }
  }

 private:
  Result<HclToken> peek() {
    if (!ahead_) {
      auto t = lexer_.next();
      if (!t) return std::unexpected(t.error());
      ahead_ = *t;
    }
    return *ahead_;
  }

  Result<HclToken> take() {
    auto t = peek();
    ahead_.reset();
    return t;
  }

  std::unexpected<Error> error(const HclToken& at, std::string_view what) const {
    std::string found = at.kind == K::eof       ? "end of file"
                        : at.kind == K::newline ? "end of line"
                                                : "\"" + std::string(at.text.substr(0, 24)) + "\"";
    return fail(errc::kInvalidArgument, "line " + std::to_string(at.line) + ": " +
                                            std::string(what) + ", found " + found);
  }

  std::unexpected<Error> too_deep() {
    auto at = peek();
    if (!at) return std::unexpected(at.error());
    return error(*at, "nested deeper than " + std::to_string(kMaxHclNesting) + " levels");
  }

  Status parse_item(const HclToken& name, ConfigBody& body, int depth) {
    auto t = take();
    if (!t) return std::unexpected(t.error());
    if (t->kind == K::equals) {
      auto value = parse_expression(depth + 1);
      if (!value) return std::unexpected(value.error());
      body.attributes.push_back({std::string(name.text), name.line, std::move(*value)});
      return {};
    }
    ConfigBlock block{std::string(name.text), {}, name.line, {}};
    while (t->kind == K::string || t->kind == K::identifier) {
      if (t->has_template) return error(*t, "a block label cannot hold a template");
      block.labels.push_back(t->kind == K::string ? hcl_unquote(t->text) : std::string(t->text));
      t = take();
      if (!t) return std::unexpected(t.error());
    }
    if (t->kind != K::open_brace)
      return error(*t, "expected = or { after " + std::string(name.text.substr(0, 64)));
    if (depth + 1 > kMaxHclNesting) return too_deep();
    TAKOSUMI_TRY(parse_body(block.body, depth + 1));
    body.blocks.push_back(std::move(block));
    return {};
  }

  // operand (binary-operator operand)*; a conditional's ? and : count as binary operators.
  Result<ConfigValue> parse_expression(int depth) {
    if (depth > kMaxHclNesting) return too_deep();
    ConfigValue first;
    int operands = 0;
    bool plain = true;
    for (;;) {
      for (;;) {
        auto p = peek();
        if (!p) return std::unexpected(p.error());
        if (p->kind != K::op || (p->text != "-" && p->text != "!")) break;
        plain = false;
        (void)take();
      }
      auto operand = parse_operand(depth);
      if (!operand) return std::unexpected(operand.error());
      if (operands++ == 0) first = std::move(*operand);
      auto p = peek();
      if (!p) return std::unexpected(p.error());
      if (!is_binary_operator(*p)) break;
      (void)take();
    }
    if (operands > 1 || !plain) return ConfigValue{};
    return first;
  }

  Result<ConfigValue> parse_operand(int depth) {
    auto t = take();
    if (!t) return std::unexpected(t.error());
    ConfigValue v;
    switch (t->kind) {
      case K::string:
        if (!t->has_template) v = ConfigValue{ValueKind::string, hcl_unquote(t->text), {}};
        break;
      case K::heredoc:
      case K::number: break;
      case K::identifier: {
        auto call = parse_call(*t, depth);
        if (!call) return std::unexpected(call.error());
        v = std::move(*call);
        break;
      }
      case K::open_paren:
      case K::open_bracket: TAKOSUMI_TRY(skip_group(t->kind, depth)); break;
      case K::open_brace: {
        auto object = parse_object(depth);
        if (!object) return std::unexpected(object.error());
        v = std::move(*object);
        break;
      }
      default: return error(*t, "expected an expression");
    }
    TAKOSUMI_TRY(parse_postfix(v, depth));
    return v;
  }

  // name, name(args) or provider::p::f(args)
  Result<ConfigValue> parse_call(const HclToken& name, int depth) {
    ConfigValue v{ValueKind::reference, std::string(name.text), {}};
    for (;;) {
      auto p = peek();
      if (!p) return std::unexpected(p.error());
      if (p->kind == K::double_colon) {
        (void)take();
        auto part = take();
        if (!part) return std::unexpected(part.error());
        if (part->kind != K::identifier) return error(*part, "expected a name after ::");
        v = ConfigValue{};
      } else if (p->kind == K::open_paren) {
        (void)take();
        TAKOSUMI_TRY(skip_group(K::open_paren, depth));
        return ConfigValue{};
      } else {
        return v;
      }
    }
  }

  // .name, .0, .*, [index]: a reference stays a reference, anything else becomes other.
  Status parse_postfix(ConfigValue& v, int depth) {
    for (;;) {
      auto p = peek();
      if (!p) return std::unexpected(p.error());
      if (p->kind == K::dot) {
        (void)take();
        auto part = take();
        if (!part) return std::unexpected(part.error());
        if (part->kind != K::identifier && part->kind != K::number && part->text != "*")
          return error(*part, "expected a name after .");
      } else if (p->kind == K::open_bracket) {
        (void)take();
        TAKOSUMI_TRY(skip_group(K::open_bracket, depth));
      } else {
        return {};
      }
      if (v.kind != ValueKind::reference) v = ConfigValue{};
    }
  }

  Result<ConfigValue> parse_object(int depth) {
    ConfigValue v{ValueKind::object, {}, {}};
    bool first = true;
    for (;;) {
      auto t = peek();
      if (!t) return std::unexpected(t.error());
      if (t->kind == K::newline || t->kind == K::comma) {
        (void)take();
        continue;
      }
      if (t->kind == K::close_brace) {
        (void)take();
        return v;
      }
      if (first && t->kind == K::identifier && t->text == "for") {
        TAKOSUMI_TRY(skip_group(K::open_brace, depth));
        return ConfigValue{};
      }
      first = false;
      auto key = parse_object_key(depth);
      if (!key) return std::unexpected(key.error());
      auto value = parse_expression(depth + 1);
      if (!value) return std::unexpected(value.error());
      value->items.clear();  // one level is all the scan reads
      if (*key) v.items.push_back({std::move(**key), std::move(*value)});
    }
  }

  // A name or literal string is returned; other keys ((expr), templates) are skipped.
  Result<std::optional<std::string>> parse_object_key(int depth) {
    auto t = take();
    if (!t) return std::unexpected(t.error());
    std::optional<std::string> key;
    if (t->kind == K::identifier) {
      key = std::string(t->text);
    } else if (t->kind == K::string && !t->has_template) {
      key = hcl_unquote(t->text);
    } else if (t->kind != K::string && !is_opener(t->kind)) {
      return error(*t, "expected an object key");
    } else if (is_opener(t->kind)) {
      TAKOSUMI_TRY(skip_group(t->kind, depth));
    }
    for (;;) {
      auto next = take();
      if (!next) return std::unexpected(next.error());
      if (next->kind == K::equals || next->kind == K::colon) return key;
      if (next->kind == K::newline || next->kind == K::comma || next->kind == K::eof ||
          is_closer(next->kind))
        return error(*next, "expected = or : after an object key");
      if (is_opener(next->kind)) TAKOSUMI_TRY(skip_group(next->kind, depth));
      key.reset();
    }
  }

  // Consumes up to and including the closer of an opener already taken.
  Status skip_group(K opener, int depth) {
    std::vector<K> closers{closer_of(opener)};
    while (!closers.empty()) {
      if (depth + static_cast<int>(closers.size()) > kMaxHclNesting) return too_deep();
      auto t = take();
      if (!t) return std::unexpected(t.error());
      if (t->kind == K::eof) return error(*t, "a bracket is not closed");
      if (is_opener(t->kind)) {
        closers.push_back(closer_of(t->kind));
      } else if (is_closer(t->kind)) {
        if (t->kind != closers.back()) return error(*t, "mismatched bracket");
        closers.pop_back();
      }
    }
    return {};
  }

  HclLexer lexer_;
  std::optional<HclToken> ahead_;
};

}  // namespace

Result<ConfigBody> parse_hcl(std::string_view text) {
  Parser parser(text);
  ConfigBody body;
  TAKOSUMI_TRY(parser.parse_body(body, 0));
  return body;
}

}  // namespace takosumi::runner
