#include "protocol/signed_document.hpp"

#include "common/error_codes.hpp"
#include "common/json_fields.hpp"
#include "common/strict_json.hpp"
#include "crypto/sha256.hpp"
#include "crypto/signature.hpp"

namespace takosumi::protocol {
namespace {

namespace json = boost::json;

std::string signed_bytes(std::string_view format, std::int64_t version, std::string_view payload) {
  return std::string(format) + "\n" + std::to_string(version) + "\n" + std::string(payload);
}

std::unexpected<Error> invalid(std::string message) {
  return fail(errc::kBackupInvalid, std::move(message));
}

}  // namespace

SignedDocument sign_document(std::string format, std::int64_t version, std::string payload,
                             const crypto::SignKeyPair& key) {
  SignedDocument d{std::move(format), version, std::move(payload), "", "",
                   key.public_key.to_base64()};
  d.sha256 = crypto::sha256_hex(d.payload);
  d.signature = crypto::sign_detached(signed_bytes(d.format, d.version, d.payload), key);
  return d;
}

std::string to_text(const SignedDocument& d) {
  return takosumi::serialize(json::object{{"format", d.format},
                                          {"version", d.version},
                                          {"payload", d.payload},
                                          {"sha256", d.sha256},
                                          {"signature", d.signature},
                                          {"signPublicKey", d.sign_public_key}});
}

Result<json::object> open_signed_document(std::string_view text, std::size_t max_bytes,
                                          std::string_view format, std::int64_t version,
                                          const crypto::SignPublicKey& trusted) {
  auto outer = parse_object(text, max_bytes);
  if (!outer) return invalid("not a signed document: " + outer.error().message);
  if (auto known = check_known_fields(
          *outer, {"format", "version", "payload", "sha256", "signature", "signPublicKey"});
      !known)
    return invalid(known.error().message);
  auto got_format = get_string(*outer, "format", 64);
  auto got_version = get_int(*outer, "version");
  auto payload = get_string(*outer, "payload", max_bytes);
  auto sha256 = get_string(*outer, "sha256", 64);
  auto signature = get_string(*outer, "signature", 128);
  if (const Error* e = first_error(got_format, got_version, payload, sha256, signature))
    return invalid("not a signed document: " + e->message);
  if (*got_format != format || *got_version != version)
    return invalid("a " + *got_format + " document of version " + std::to_string(*got_version) +
                   ", not a " + std::string(format) + " document of version " +
                   std::to_string(version));
  if (crypto::sha256_hex(*payload) != *sha256)
    return invalid("the payload does not have the SHA-256 the document names");
  if (crypto::verify_detached(signed_bytes(format, version, *payload), *signature, trusted) !=
      crypto::SignatureCheck::valid)
    return fail(errc::kBackupSignatureInvalid,
                "the document is not signed by the key given (" + trusted.to_base64() +
                    "): check it is the source control plane's keys/signing.pub, and that the "
                    "file was not changed");
  auto inner = parse_object(*payload, max_bytes);
  if (!inner) return invalid("the signed payload is not a JSON object");
  return inner;
}

}  // namespace takosumi::protocol
