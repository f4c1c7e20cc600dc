#include "runner/state/state_file.hpp"

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "common/failure_codes.hpp"
#include "common/json_fields.hpp"

namespace takosumi::runner {

namespace {

std::unexpected<Error> bad(const Error& e) {
  return fail(errc::kStateIntegrityFailed, "state: " + e.message);
}

}  // namespace

Result<StateIdentity> parse_state_identity(std::string_view text, std::uint64_t max_bytes) {
  auto doc = parse_object(text, static_cast<std::size_t>(max_bytes));
  if (!doc) return bad(doc.error());
  return state_identity(*doc);
}

Result<StateIdentity> state_identity(const boost::json::object& state) {
  const auto* doc = &state;
  auto version = get_int(*doc, "version");
  if (!version) return bad(version.error());
  if (*version != 4)
    return fail(errc::kStateIntegrityFailed,
                "state: format version " + std::to_string(*version) + " is not 4");
  auto serial = get_int(*doc, "serial");
  if (!serial) return bad(serial.error());
  auto lineage = get_string(*doc, "lineage", 128);
  if (!lineage) return bad(lineage.error());
  auto resources = get_optional_array(*doc, "resources");
  if (!resources) return bad(resources.error());
  auto outputs = get_optional_object(*doc, "outputs");
  if (!outputs) return bad(outputs.error());
  const bool empty = (!*resources || (*resources)->empty()) && (!*outputs || (*outputs)->empty());
  return StateIdentity{*serial, std::move(*lineage), empty};
}

Result<StateIdentity> read_state_identity(const std::filesystem::path& path, std::uint64_t max_bytes) {
  auto text = read_file(path, static_cast<std::size_t>(max_bytes));
  if (!text) return std::unexpected(text.error());
  return with_context(parse_state_identity(*text, max_bytes), path.string());
}

boost::json::object state_outputs(const boost::json::object& state) {
  boost::json::object out;
  const auto* outputs = state.if_contains("outputs");
  if (!outputs || !outputs->is_object()) return out;
  for (const auto& [name, entry] : outputs->get_object()) {
    if (!entry.is_object()) continue;
    const auto& e = entry.get_object();
    boost::json::object o;
    const auto* sensitive = e.if_contains("sensitive");
    // Anything but an explicit false stays sensitive: a malformed flag never publishes.
    o["sensitive"] = !(sensitive == nullptr || (sensitive->is_bool() && !sensitive->get_bool()));
    if (const auto* type = e.if_contains("type")) o["type"] = *type;
    if (const auto* value = e.if_contains("value")) o["value"] = *value;
    out[name] = std::move(o);
  }
  return out;
}

}  // namespace takosumi::runner
