#pragma once
// Reads the ELF interpreter (PT_INTERP, the dynamic loader) a program names. Plain standard C++
// over POSIX, shared by takosumi-confine and the runner's checks of tofu and the providers.
#include <expected>
#include <optional>
#include <string>

namespace takosumi::confine {

// The interpreter path of a 64-bit ELF executable; nullopt for a statically linked one and for a
// file that is not ELF at all (a script: its "#!" interpreter is the kernel's business). The
// error names the file and what could not be read.
std::expected<std::optional<std::string>, std::string> elf_interpreter(const std::string& path);

}  // namespace takosumi::confine
