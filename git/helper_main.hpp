#pragma once
// The Git helper's side (git/remote_helper.hpp): reads one request from stdin, runs it
// (git/remote_ops.hpp), writes the result to stdout. Returns the exit code: 0 when a result was
// written (a failed remote operation is a result too), 2 when the request did not parse.
namespace takosumi::git {

int git_helper_main();

}  // namespace takosumi::git
