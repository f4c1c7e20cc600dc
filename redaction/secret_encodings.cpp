#include "redaction/secret_encodings.hpp"

#include <sodium.h>

#include <cctype>

#include "redaction/scratch_text.hpp"

namespace takosumi::redaction {
namespace {

constexpr char kUpperHex[] = "0123456789ABCDEF";

// value preceded by `align` zero bytes, base64-encoded; passes on the characters that depend on
// value alone: the leading ones carry bits of the preceding bytes, the last one (when the value
// does not end a 3-byte group) bits of what follows.
void base64_at(std::string_view value, std::size_t align, int variant,
               const std::function<void(SecretForm, std::string_view)>& each) {
  const std::size_t total = align + value.size();
  ScratchText bytes(total);
  bytes.text().assign(align, '\0');
  bytes.text().append(value);
  ScratchText encoded(sodium_base64_ENCODED_LEN(total, variant));
  encoded.text().resize(sodium_base64_ENCODED_LEN(total, variant));
  sodium_bin2base64(encoded.text().data(), encoded.text().size(),
                    reinterpret_cast<const unsigned char*>(bytes.text().data()), total, variant);
  const std::size_t first = (8 * align + 5) / 6;  // ceil: the characters touching the pad
  const std::size_t end = (8 * total) / 6;        // floor: the last character wholly inside
  if (end > first) each(SecretForm::base64, std::string_view(encoded.text()).substr(first, end - first));
}

void hex_forms(std::string_view value, const std::function<void(SecretForm, std::string_view)>& each) {
  ScratchText hex(2 * value.size() + 1);
  hex.text().resize(2 * value.size() + 1);
  sodium_bin2hex(hex.text().data(), hex.text().size(),
                 reinterpret_cast<const unsigned char*>(value.data()), value.size());
  hex.text().pop_back();  // the terminating NUL
  each(SecretForm::hex, hex.text());
  for (auto& c : hex.text()) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  each(SecretForm::hex, hex.text());
}

bool is_unreserved(unsigned char c) {
  return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~';
}

void percent_form(std::string_view value, std::string_view space,
                  const std::function<void(SecretForm, std::string_view)>& each) {
  ScratchText out(3 * value.size());
  for (const char ch : value) {
    const auto c = static_cast<unsigned char>(ch);
    if (is_unreserved(c)) {
      out.text() += ch;
    } else if (c == ' ') {
      out.text() += space;
    } else {
      out.text() += '%';
      out.text() += kUpperHex[c >> 4];
      out.text() += kUpperHex[c & 0xf];
    }
  }
  if (out.text() != value) each(SecretForm::percent, out.text());
}

}  // namespace

std::string_view describe(SecretForm form) {
  switch (form) {
    case SecretForm::value: return "the value";
    case SecretForm::json_escaped: return "the JSON-escaped value";
    case SecretForm::line: return "a line of the value";
    case SecretForm::base64: return "a base64 encoding";
    case SecretForm::hex: return "a hex encoding";
    case SecretForm::percent: return "a percent-encoding";
  }
  return "a form";
}

void for_each_encoding(std::string_view value,
                       const std::function<void(SecretForm, std::string_view)>& each) {
  for (const int variant : {sodium_base64_VARIANT_ORIGINAL, sodium_base64_VARIANT_URLSAFE})
    for (std::size_t align = 0; align < 3; ++align) base64_at(value, align, variant, each);
  hex_forms(value, each);
  percent_form(value, "+", each);
  percent_form(value, "%20", each);
}

}  // namespace takosumi::redaction
