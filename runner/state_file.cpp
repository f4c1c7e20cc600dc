#include "runner/state_file.hpp"

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "protocol/json_fields.hpp"

namespace takosumi::runner {

Result<StateIdentity> parse_state_identity(std::string_view text) {
  auto bad = [](const Error& e) { return fail(errc::kStateIntegrityFailed, "state: " + e.message); };
  auto doc = protocol::parse_object(text, kMaxStateBytes);
  if (!doc) return bad(doc.error());
  auto version = protocol::get_int(*doc, "version");
  if (!version) return bad(version.error());
  if (*version != 4)
    return fail(errc::kStateIntegrityFailed,
                "state: format version " + std::to_string(*version) + " is not 4");
  auto serial = protocol::get_int(*doc, "serial");
  if (!serial) return bad(serial.error());
  auto lineage = protocol::get_string(*doc, "lineage", 128);
  if (!lineage) return bad(lineage.error());
  auto resources = protocol::get_optional_array(*doc, "resources");
  if (!resources) return bad(resources.error());
  auto outputs = protocol::get_optional_object(*doc, "outputs");
  if (!outputs) return bad(outputs.error());
  const bool empty = (!*resources || (*resources)->empty()) && (!*outputs || (*outputs)->empty());
  return StateIdentity{*serial, std::move(*lineage), empty};
}

Result<StateIdentity> read_state_identity(const std::filesystem::path& path) {
  auto text = read_file(path, kMaxStateBytes);
  if (!text) return std::unexpected(text.error());
  return with_context(parse_state_identity(*text), path.string());
}

}  // namespace takosumi::runner
