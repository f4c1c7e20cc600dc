#pragma once
// JSON received from outside the process, parsed strictly: a key that appears twice in one object
// is refused. Readers disagree on such a document (first value or last?), so it must not be
// signed, stored or acted on. Boost.JSON 1.81 keeps the last duplicate and has no option to refuse
// one, so this parse drives basic_parser with a handler that builds the value as json::parser does
// and checks each object's keys as they arrive.
#include <boost/json/parse_options.hpp>
#include <boost/json/storage_ptr.hpp>
#include <boost/json/value.hpp>

#include <string_view>

#include "common/error.hpp"

namespace takosumi {

// The value of text, allocated from sp. invalid_argument for text that is not one JSON document
// ("invalid JSON: …") and for a duplicate key ("duplicate key \"name\" in source.ref" — the key
// and the path of the object that holds it, "[]" standing for an array element).
Result<boost::json::value> parse_json_strict(std::string_view text,
                                             const boost::json::parse_options& options = {},
                                             boost::json::storage_ptr sp = {});

}  // namespace takosumi
