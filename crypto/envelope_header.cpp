#include "crypto/envelope_header.hpp"

#include "common/encoding.hpp"
#include "common/error_codes.hpp"
#include "common/json_fields.hpp"

namespace takosumi::crypto::detail {
namespace {

namespace json = boost::json;

// Far above any real state file, far below int64 overflow in the payload-length arithmetic.
constexpr std::int64_t kMaxPlaintextSize = std::int64_t{1} << 50;

Status read_string(const json::object& o, std::string_view key, std::size_t max,
                   std::string& dst) {
  auto r = get_string(o, key, max);
  if (!r) return std::unexpected(r.error());
  dst = std::move(*r);
  return {};
}

Status read_int(const json::object& o, std::string_view key, std::int64_t& dst) {
  auto r = get_int(o, key);
  if (!r) return std::unexpected(r.error());
  dst = *r;
  return {};
}

Status validate(const EnvelopeHeader& h) {
  if (h.kind != "state" && h.kind != "plan")
    return fail(errc::kInvalidArgument, "field \"kind\" must be \"state\" or \"plan\"");
  if (h.plaintext_size < 0 || h.plaintext_size > kMaxPlaintextSize)
    return fail(errc::kInvalidArgument, "field \"plaintextSize\" is out of range");
  if (!is_sha256_hex(h.plaintext_sha256))
    return fail(errc::kInvalidArgument, "field \"plaintextSha256\" must be 64 lowercase hex digits");
  return {};
}

Result<EnvelopeHeader> read_fields(const json::object& o) {
  EnvelopeHeader h;
  TAKOSUMI_TRY(read_string(o, "kind", 16, h.kind));
  TAKOSUMI_TRY(read_string(o, "capsuleId", 128, h.capsule_id));
  TAKOSUMI_TRY(read_string(o, "runId", 128, h.run_id));
  TAKOSUMI_TRY(read_int(o, "generation", h.generation));
  TAKOSUMI_TRY(read_string(o, "lineage", 128, h.lineage));
  TAKOSUMI_TRY(read_int(o, "serial", h.serial));
  TAKOSUMI_TRY(read_int(o, "plaintextSize", h.plaintext_size));
  TAKOSUMI_TRY(read_string(o, "plaintextSha256", 64, h.plaintext_sha256));
  TAKOSUMI_TRY(read_string(o, "keyId", 128, h.key_id));
  TAKOSUMI_TRY(validate(h));
  return h;
}

std::string in_quotes(std::string_view s) {
  // Appended piecewise: `"\"" + std::string(s)` trips a GCC 12 -Wrestrict false positive.
  std::string out(1, '"');
  out.append(s).push_back('"');
  return out;
}

}  // namespace

std::string header_to_json(const EnvelopeHeader& h) {
  // json::object keeps insertion order; this order is part of the format.
  json::object o;
  o.emplace("kind", h.kind);
  o.emplace("capsuleId", h.capsule_id);
  o.emplace("runId", h.run_id);
  o.emplace("generation", h.generation);
  o.emplace("lineage", h.lineage);
  o.emplace("serial", h.serial);
  o.emplace("plaintextSize", h.plaintext_size);
  o.emplace("plaintextSha256", h.plaintext_sha256);
  o.emplace("keyId", h.key_id);
  return serialize(o);
}

Result<EnvelopeHeader> header_from_json(std::string_view text) {
  auto o = parse_object(text, kMaxHeaderBytes);
  if (!o) return fail(errc::kEnvelopeMalformed, "header: " + o.error().message);
  auto h = read_fields(*o);
  if (!h) return fail(errc::kEnvelopeMalformed, "header: " + h.error().message);
  if (header_to_json(*h) != text)
    return fail(errc::kEnvelopeMalformed,
                "header JSON is not in canonical form (fixed key order, no extra keys or spaces)");
  return h;
}

Status check_expectation(const EnvelopeHeader& h, const EnvelopeExpectation& expect) {
  auto mismatch = [&](std::string_view field, const std::string& got, const std::string& want) {
    return fail(errc::kEnvelopeHeaderMismatch,
                "envelope header " + std::string(field) + " is " + got + " but " + want +
                    " was expected (a swapped or replayed artifact?)");
  };
  if (!expect.kind.empty() && h.kind != expect.kind)
    return mismatch("kind", in_quotes(h.kind), in_quotes(expect.kind));
  if (!expect.capsule_id.empty() && h.capsule_id != expect.capsule_id)
    return mismatch("capsuleId", in_quotes(h.capsule_id), in_quotes(expect.capsule_id));
  if (expect.generation && h.generation != *expect.generation)
    return mismatch("generation", std::to_string(h.generation),
                    std::to_string(*expect.generation));
  if (expect.plaintext_sha256 && h.plaintext_sha256 != *expect.plaintext_sha256)
    return mismatch("plaintextSha256", h.plaintext_sha256, *expect.plaintext_sha256);
  return {};
}

}  // namespace takosumi::crypto::detail
