#pragma once
// The encoded forms of a secret that SecretSet stores beside the value, so that a value a module
// encodes before printing it (base64encode, filebase64 of /proc/self/environ, urlencode, a hex
// dump) is still redacted in logs and refused in Outputs:
// - base64, standard and URL-safe alphabets, at the three alignments the value can have inside a
//   larger encoded blob (offset 0, 1 or 2 mod 3): only the characters that depend on the value
//   alone, without '=' padding — the first and last characters of an embedded value also carry
//   bits of its neighbours;
// - hex, lower and upper case;
// - percent-encoding as Go's url.QueryEscape writes it (unreserved A-Z a-z 0-9 - _ . ~ kept,
//   space as '+', uppercase hex digits) and the same with space as "%20".
// Forms shorter than kMinRedactedLength are useless and left out by SecretSet.
#include <functional>
#include <string_view>

namespace takosumi::redaction {

// Which form of a secret a stored string is.
enum class SecretForm { value, json_escaped, line, base64, hex, percent };

// For refusal reasons: "the value", "a base64 encoding", … (never the value itself).
std::string_view describe(SecretForm form);

// Calls each(form, text) for every encoded form of value above (duplicates possible). text lives
// in scratch memory that is zeroed when each returns.
void for_each_encoding(std::string_view value,
                       const std::function<void(SecretForm, std::string_view)>& each);

}  // namespace takosumi::redaction
