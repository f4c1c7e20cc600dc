#pragma once
// What the Run failure codes mean to the protocol: which codes may end a Run, and how another
// error becomes one. The codes themselves are in common/failure_codes.hpp, beside every other
// stable code (common/error_codes.hpp): one home for the errc namespace.
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::protocol {

// True for every code of common/failure_codes.hpp and for errc::kInternal and errc::kUnavailable.
bool is_run_failure_code(std::string_view code);

// e unchanged when its code is a Run failure code; otherwise fallback as the code, with e's code
// kept at the front of the message ("io_error: write …"), so nothing about the cause is lost.
Error as_run_failure(Error e, std::string_view fallback);

}  // namespace takosumi::protocol
