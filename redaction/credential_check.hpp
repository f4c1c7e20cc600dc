#pragma once
// Refuses Output values that look like credentials before they are published: an Output is
// readable by every Capsule it is shared with, so a credential must travel as a Connection instead.
#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "redaction/secret_set.hpp"

namespace takosumi::redaction {

// A short reason ("URL with a password in its userinfo", "AWS access key id", ...) when value
// looks like a credential: a shape PatternRedactor redacts (Authorization header, Bearer/Basic
// token, URL password, password=-style pair, private key block), an AWS access key id, a JWT, a
// GitHub or Slack token. The reason never contains the value.
std::optional<std::string> credential_reason(std::string_view value);

// Checks every string (object keys included) and number in value; also refuses a value containing
// any exact secret in known or one of its encodings (base64, hex, percent-encoding: see
// redaction/secret_encodings.hpp), naming the encoding. A mere 8-byte piece of a secret is not
// refused: too many ordinary values share one with some secret.
std::optional<std::string> credential_reason(const boost::json::value& value,
                                             const SecretSet& known);

}  // namespace takosumi::redaction
