#pragma once
// Tells a module's author why a program did not start. The exec allowlist refuses every file the
// Run could have written or brought (the checkout among them: its files are the repository's,
// any code), so a module that runs `./run.sh` fails with the shell's or Go's bare "permission
// denied" and exit status 126. This finds that line among a failed command's diagnostics and
// says what happened in words, with what the author and the operator can do.
#include <optional>
#include <string>
#include <string_view>

namespace takosumi::runner {

// The program a line says could not be executed ("/bin/sh: 1: ./run.sh: Permission denied",
// "bash: line 1: ./x: Permission denied", "fork/exec ./x: permission denied"), or nullopt.
// A refused read or write ("open /etc/x: permission denied") is not an exec, nor a name with
// anything but path characters in it.
std::optional<std::string> denied_program(std::string_view line);

// The explanation for the Run's failure (exec_denied) when `program` was refused.
std::string exec_denial_message(std::string_view program);

}  // namespace takosumi::runner
