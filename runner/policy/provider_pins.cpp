#include "runner/policy/provider_pins.hpp"

#include "common/ascii.hpp"
#include "common/file_io.hpp"

#include <algorithm>
#include <cctype>

#include "common/error_codes.hpp"
#include "protocol/failure_codes.hpp"
#include "runner/policy/hcl_lexer.hpp"
#include "runner/policy/package_hash.hpp"

namespace takosumi::runner {
namespace {

class PinReader {
 public:
  explicit PinReader(std::string_view text) : lexer_(text) {}

  Result<std::vector<ProviderPin>> read() {
    std::vector<ProviderPin> pins;
    for (;;) {
      auto t = next_significant();
      if (!t) return std::unexpected(t.error());
      if (t->kind == HclTokenKind::eof) return pins;
      if (t->kind != HclTokenKind::identifier || t->text != "provider")
        return bad(*t, "expected a provider block");
      auto pin = read_block();
      if (!pin) return std::unexpected(pin.error());
      if (find_pin(pins, pin->address, pin->version))
        return bad(*t, "provider " + pin->address + " " + pin->version + " is pinned twice");
      pins.push_back(std::move(*pin));
    }
  }

 private:
  Result<HclToken> next_significant() {
    for (;;) {
      auto t = lexer_.next();
      if (!t || t->kind != HclTokenKind::newline) return t;
    }
  }

  std::unexpected<Error> bad(const HclToken& at, const std::string& what) const {
    return fail(errc::kInvalidArgument, "line " + std::to_string(at.line) + ": " + what);
  }

  Result<std::string> string_of(const HclToken& t) const {
    if (t.kind != HclTokenKind::string || t.has_template ||
        t.text.find('\\') != std::string_view::npos)
      return bad(t, "expected a plain quoted string");
    return std::string(t.text.substr(1, t.text.size() - 2));
  }

  Result<ProviderPin> read_block() {
    ProviderPin pin;
    auto name = next_significant();
    if (!name) return std::unexpected(name.error());
    auto address = string_of(*name);
    if (!address) return std::unexpected(address.error());
    pin.address = ascii_lower(*address);
    auto open = next_significant();
    if (!open) return std::unexpected(open.error());
    if (open->kind != HclTokenKind::open_brace) return bad(*open, "expected {");
    bool has_hashes = false;
    std::vector<std::string_view> seen;
    for (;;) {
      auto key = next_significant();
      if (!key) return std::unexpected(key.error());
      if (key->kind == HclTokenKind::close_brace) break;
      if (key->kind != HclTokenKind::identifier) return bad(*key, "expected an attribute");
      if (std::find(seen.begin(), seen.end(), key->text) != seen.end())
        return bad(*key, std::string(key->text) + " is set twice");
      seen.push_back(key->text);
      auto eq = next_significant();
      if (!eq) return std::unexpected(eq.error());
      if (eq->kind != HclTokenKind::equals) return bad(*eq, "expected =");
      if (key->text == "version" || key->text == "constraints") {
        auto value = next_significant();
        if (!value) return std::unexpected(value.error());
        auto text = string_of(*value);
        if (!text) return std::unexpected(text.error());
        if (key->text == "version") pin.version = std::move(*text);
      } else if (key->text == "hashes") {
        TAKOSUMI_TRY(read_hashes(pin));
        has_hashes = true;
      } else {
        return bad(*key, "unknown attribute " + std::string(key->text) +
                             " (a pin has version, constraints and hashes)");
      }
    }
    if (pin.version.empty()) return bad(*open, "provider " + pin.address + " has no version");
    if (!has_hashes || pin.hashes.empty())
      return bad(*open, "provider " + pin.address + " has no hashes");
    return pin;
  }

  Status read_hashes(ProviderPin& pin) {
    auto open = next_significant();
    if (!open) return std::unexpected(open.error());
    if (open->kind != HclTokenKind::open_bracket) return bad(*open, "expected [");
    for (;;) {
      auto t = next_significant();
      if (!t) return std::unexpected(t.error());
      if (t->kind == HclTokenKind::close_bracket) return {};
      auto hash = string_of(*t);
      if (!hash) return std::unexpected(hash.error());
      if (!hash->starts_with("h1:") && !hash->starts_with("zh:"))
        return bad(*t, "a hash is h1:… or zh:…");
      pin.hashes.push_back(std::move(*hash));
      auto sep = next_significant();
      if (!sep) return std::unexpected(sep.error());
      if (sep->kind == HclTokenKind::close_bracket) return {};
      if (sep->kind != HclTokenKind::comma) return bad(*sep, "expected , or ]");
    }
  }

  HclLexer lexer_;
};

}  // namespace

Result<std::vector<ProviderPin>> parse_provider_pins(std::string_view text) {
  return PinReader(text).read();
}

const ProviderPin* find_pin(const std::vector<ProviderPin>& pins, std::string_view address,
                            std::string_view version) {
  for (const auto& p : pins)
    if (p.address == address && p.version == version) return &p;
  return nullptr;
}

Result<std::vector<ProviderPin>> read_provider_pins(const std::filesystem::path& file) {
  auto text = read_file(file, 4 * 1024 * 1024);
  if (!text) return std::unexpected(text.error());
  auto pins = parse_provider_pins(*text);
  if (!pins) return std::unexpected(pins.error().with_context(file.string()));
  return pins;
}

Status check_lock_against_pins(const std::filesystem::path& lock, const std::vector<ProviderPin>& pins) {
  if (pins.empty()) return {};
  auto text = read_file(lock, 4 * 1024 * 1024);
  if (!text)
    return std::unexpected(
        protocol::as_run_failure(text.error(), errc::kWorkspaceFailed).with_context("provider lock"));
  auto selected = parse_provider_pins(*text);
  if (!selected)
    return fail(errc::kProviderChecksumMismatch,
                "the module's dependency lock file does not read as one: " + selected.error().message);
  for (const auto& entry : *selected) {
    const std::string what = shown_name(entry.address + " " + entry.version);
    const ProviderPin* pin = find_pin(pins, entry.address, entry.version);
    if (pin == nullptr)
      return fail(errc::kProviderChecksumMismatch,
                  "the module's lock file selects " + what + ", which tofu.providerPins does not pin");
    const bool listed = std::any_of(entry.hashes.begin(), entry.hashes.end(), [&](const auto& h) {
      return std::find(pin->hashes.begin(), pin->hashes.end(), h) != pin->hashes.end();
    });
    if (!listed)
      return fail(errc::kProviderChecksumMismatch,
                  "the module's lock file lists no hash of " + what + " that its pin lists");
  }
  return {};
}

}  // namespace takosumi::runner
