#pragma once
// The generic JSON field getters live in common/json_fields.hpp (crypto reads JSON too, and crypto
// sits below protocol). These declarations keep the protocol:: spelling used by the readers of
// request and report bodies; they add nothing.
#include "common/json_fields.hpp"
#include "common/strict_json.hpp"

namespace takosumi::protocol {

namespace json = boost::json;

using takosumi::check_known_fields;
using takosumi::get_bool_or;
using takosumi::get_int;
using takosumi::get_object;
using takosumi::get_optional_array;
using takosumi::get_optional_int;
using takosumi::get_optional_object;
using takosumi::get_optional_string;
using takosumi::get_string;
using takosumi::parse_json_strict;
using takosumi::parse_object;
using takosumi::serialize;

}  // namespace takosumi::protocol
