#pragma once
// Test-only: text shaped like a PEM private key, for redaction tests. The header lines are put
// together at run time and the body is fresh random base64 on every run, so the repository holds
// no key-shaped block and no test ever carries key material.
#include <random>
#include <string>
#include <string_view>

namespace takosumi::testing {

// pem_line("BEGIN", "RSA") is the BEGIN line of an RSA private key; pem_line("END", "PGP",
// " BLOCK") the END line of a PGP private key block; an empty label gives the PKCS#8 form.
inline std::string pem_line(std::string_view edge, std::string_view label = "",
                            std::string_view suffix = "") {
  std::string line = "-----" + std::string(edge) + " ";
  if (!label.empty()) line += std::string(label) + " ";
  return line + "PRIVATE" + " KEY" + std::string(suffix) + "-----";
}

// One line of random base64 (not a key: nothing here would parse as one).
inline std::string pem_body(std::size_t length = 32) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::random_device rd;
  std::string out;
  for (std::size_t i = 0; i < length; ++i) out += kAlphabet[rd() % 64];
  return out;
}

}  // namespace takosumi::testing
