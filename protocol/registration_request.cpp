#include "protocol/registration_request.hpp"

#include "common/error_codes.hpp"
#include "common/json_fields.hpp"
#include "crypto/keys.hpp"

namespace takosumi::protocol {
namespace {

namespace json = boost::json;

Status parse_agent_fields(const json::object& o, AgentRegistration& reg) {
  auto name = get_string(o, "name", 128);
  if (!name) return std::unexpected(name.error());
  if (name->empty()) return fail(errc::kInvalidArgument, "field \"name\" must not be empty");
  reg.name = *name;
  auto version = get_optional_string(o, "version", 64);
  if (!version) return std::unexpected(version.error());
  reg.version = version->value_or("");
  auto labels = get_optional_array(o, "labels");
  if (!labels) return std::unexpected(labels.error());
  if (*labels) {
    if ((*labels)->size() > 64) return fail(errc::kInvalidArgument, "too many labels");
    for (const auto& l : **labels) {
      if (!l.is_string() || l.get_string().size() > 128)
        return fail(errc::kInvalidArgument, "field \"labels\" must hold strings");
      reg.labels.emplace_back(l.get_string());
    }
  }
  auto capacity = get_optional_int(o, "capacity");
  if (!capacity) return std::unexpected(capacity.error());
  reg.capacity = capacity->value_or(1);
  if (reg.capacity < 1 || reg.capacity > 1024)
    return fail(errc::kInvalidArgument, "field \"capacity\" must be between 1 and 1024");
  return {};
}

Status parse_keys_and_proof(const json::object& o, RegistrationRequest& r) {
  auto box = get_string(o, "boxPublicKey", 64);
  auto sign = get_string(o, "signPublicKey", 64);
  if (const Error* e = first_error(box, sign)) return std::unexpected(*e);
  auto box_key = crypto::BoxPublicKey::from_base64(*box);
  auto sign_key = crypto::SignPublicKey::from_base64(*sign);
  if (!box_key) return fail(errc::kInvalidArgument, "boxPublicKey must be base64 of 32 bytes");
  if (!sign_key) return fail(errc::kInvalidArgument, "signPublicKey must be base64 of 32 bytes");
  r.agent.box_public_key = *box;
  // Canonical base64: compared as text with the key on record and the one an operator's reset names.
  r.agent.sign_public_key = sign_key->to_base64();
  if (!o.contains("challenge") || !o.contains("signature"))
    return fail(errc::kInvalidArgument,
                "registration must be signed (fields \"challenge\" and \"signature\", "
                "docs/protocol.md \"Register\"); upgrade this takosumi-agent");
  auto challenge = get_string(o, "challenge", 128);
  auto signature = get_string(o, "signature", 128);
  if (const Error* e = first_error(challenge, signature)) return std::unexpected(*e);
  r.challenge = *challenge;
  r.signature = *signature;
  return {};
}

}  // namespace

json::object to_json(const RegistrationRequest& r) {
  json::array labels;
  for (const auto& l : r.agent.labels) labels.emplace_back(l);
  return json::object{{"name", r.agent.name},
                      {"version", r.agent.version},
                      {"labels", std::move(labels)},
                      {"capacity", r.agent.capacity},
                      {"boxPublicKey", r.agent.box_public_key},
                      {"signPublicKey", r.agent.sign_public_key},
                      {"challenge", r.challenge},
                      {"signature", r.signature}};
}

Result<RegistrationRequest> registration_request_from_json(const json::object& o) {
  TAKOSUMI_TRY(check_known_fields(o, {"name", "version", "labels", "capacity", "boxPublicKey",
                                      "signPublicKey", "challenge", "signature"}));
  RegistrationRequest r;
  TAKOSUMI_TRY(parse_agent_fields(o, r.agent));
  TAKOSUMI_TRY(parse_keys_and_proof(o, r));
  return r;
}

}  // namespace takosumi::protocol
