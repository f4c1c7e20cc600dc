#include "runner/state/state_document.hpp"

#include <boost/json/parse.hpp>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"
#include "common/file_io.hpp"
#include "redaction/sensitive_values.hpp"

namespace takosumi::runner {

Result<boost::json::value> parse_json_document(std::string_view text, std::string_view what) {
  boost::system::error_code ec;
  boost::json::parse_options opts;
  opts.max_depth = 256;
  auto v = boost::json::parse(text, ec, {}, opts);
  if (ec) return fail(errc::kOpentofuFailed, std::string(what) + " is not JSON: " + ec.message());
  return v;
}

Result<boost::json::object> read_state_document(const std::filesystem::path& state, std::string_view what,
                                                std::uint64_t max_bytes, redaction::SecretSet& secrets) {
  auto text = read_file(state, static_cast<std::size_t>(max_bytes));
  if (!text) return std::unexpected(text.error());
  auto doc = parse_json_document(*text, what);
  if (!doc) return std::unexpected(doc.error());
  redaction::collect_state_secrets(*doc, secrets);
  if (!doc->is_object())
    return fail(errc::kStateIntegrityFailed, std::string(what) + " is not an object");
  return std::move(doc->as_object());
}

}  // namespace takosumi::runner
