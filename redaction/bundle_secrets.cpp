#include "redaction/bundle_secrets.hpp"

namespace takosumi::redaction {

std::vector<std::string> collect_bundle_secrets(const protocol::SecretBundle& bundle, SecretSet& into) {
  std::vector<std::string> too_short;
  const auto remember = [&](const std::string& what, const SecretBytes& value) {
    const std::string_view text = value.reveal_as_string();
    if (text.empty() || into.add(text)) return;
    too_short.push_back(what + " is shorter than " + std::to_string(kMinRedactedLength) +
                        " bytes: it is not redacted by exact value");
  };
  for (const auto& c : bundle.connections)
    for (const auto& [name, value] : c.values)
      remember("the value of " + name + " (Connection " + c.name + ")", value);
  for (const auto& [name, value] : bundle.sensitive_variables) remember("sensitive variable " + name, value);
  if (const auto& source = bundle.source) {
    const std::string what = "the source credential (Connection " + source->connection_id + ")";
    remember(what, source->token);
    remember(what, source->private_key);
  }
  return too_short;
}

}  // namespace takosumi::redaction
