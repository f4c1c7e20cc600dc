#pragma once
// The text of a JSON number as OpenTofu prints it (integers exactly, fractions in shortest
// round-trip form), for comparing sensitive numbers with log text. Internal to the runner.
#include <boost/json/value.hpp>

#include <optional>
#include <string>

namespace takosumi::redaction {

// nullopt unless v is a number.
std::optional<std::string> json_number_text(const boost::json::value& v);

}  // namespace takosumi::redaction
