#pragma once
// A request body written as YAML (or JSON, which YAML reads too), turned into the JSON the API
// takes: mappings and sequences as they are, a quoted scalar as a string, a plain scalar as what
// it looks like (null, true/false, an integer, a number) or else a string, so typed variables
// (bool, number, lists, maps) reach tofu with their type.
#include <boost/json/value.hpp>

#include <filesystem>

#include "common/error.hpp"

namespace takosumi::cli {

// config_invalid naming the file and the YAML error; "-" reads stdin.
Result<boost::json::value> read_yaml_as_json(const std::filesystem::path& file);

}  // namespace takosumi::cli
