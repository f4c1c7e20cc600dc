#include "controlplane/store/db/stored_names.hpp"

#include <boost/json.hpp>

#include "common/error_codes.hpp"
#include "common/json_fields.hpp"

namespace takosumi::controlplane {

std::string names_to_text(const std::vector<std::string>& names) {
  boost::json::array out;
  for (const auto& n : names) out.emplace_back(n);
  return takosumi::serialize(out);
}

Result<std::vector<std::string>> names_from_text(std::string_view text) {
  boost::system::error_code ec;
  const boost::json::value parsed = boost::json::parse(text, ec);
  if (ec || !parsed.is_array())
    return fail(errc::kInternal, "a stored name list is not a JSON array");
  std::vector<std::string> names;
  for (const auto& n : parsed.get_array())
    if (n.is_string()) names.emplace_back(n.get_string());
  return names;
}

}  // namespace takosumi::controlplane
