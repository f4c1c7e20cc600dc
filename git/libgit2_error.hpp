#pragma once
// The one adapter from libgit2's thread-local last error to an Error.
#include <string_view>

#include "common/error.hpp"

namespace takosumi::git {

// Error{code, "<what>: libgit2: <git_error_last message>"}; call right after the failing call,
// on the same thread.
Error libgit2_error(std::string_view code, std::string_view what);

// Initializes libgit2 once per process (thread-safe; never shut down).
void ensure_libgit2();

}  // namespace takosumi::git
