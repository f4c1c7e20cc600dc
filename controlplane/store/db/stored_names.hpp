#pragma once
// A column that holds a list of names (a Capsule's sensitive variable names, a Connection's
// credential names) as a JSON array of strings: written and read here only.
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"

namespace takosumi::controlplane {

std::string names_to_text(const std::vector<std::string>& names);
// Refused when the text is not a JSON array; entries that are not strings are left out.
Result<std::vector<std::string>> names_from_text(std::string_view text);

}  // namespace takosumi::controlplane
