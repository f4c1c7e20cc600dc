#include "git/libgit2_error.hpp"

#include <git2.h>

#include <string>

namespace takosumi::git {

Error libgit2_error(std::string_view code, std::string_view what) {
  const git_error* e = git_error_last();
  std::string detail = e && e->message ? e->message : "unknown error";
  return Error{std::string(code), std::string(what) + ": libgit2: " + detail};
}

void ensure_libgit2() {
  static const int once = git_libgit2_init();
  (void)once;
}

}  // namespace takosumi::git
