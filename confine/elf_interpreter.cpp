#include "confine/elf_interpreter.hpp"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/unique_fd.hpp"

namespace takosumi::confine {
namespace {

constexpr std::size_t kMaxInterpreter = 4096;
constexpr int kMaxProgramHeaders = 256;

bool read_at(int fd, void* out, std::size_t size, off_t offset) {
  return ::pread(fd, out, size, offset) == static_cast<ssize_t>(size);
}

}  // namespace

std::expected<std::optional<std::string>, std::string> elf_interpreter(const std::string& path) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return std::unexpected(path + ": " + std::strerror(errno));
  Elf64_Ehdr header{};
  if (!read_at(fd.get(), &header, sizeof header, 0) ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
    return std::optional<std::string>{};
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_phentsize != sizeof(Elf64_Phdr) ||
      header.e_phnum > kMaxProgramHeaders)
    return std::unexpected(path + ": not a 64-bit ELF file this agent can read");
  for (int i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr ph{};
    if (!read_at(fd.get(), &ph, sizeof ph, static_cast<off_t>(header.e_phoff + i * sizeof ph)))
      return std::unexpected(path + ": truncated program headers");
    if (ph.p_type != PT_INTERP) continue;
    if (ph.p_filesz == 0 || ph.p_filesz > kMaxInterpreter)
      return std::unexpected(path + ": malformed interpreter entry");
    std::string interpreter(ph.p_filesz, '\0');
    if (!read_at(fd.get(), interpreter.data(), interpreter.size(), static_cast<off_t>(ph.p_offset)))
      return std::unexpected(path + ": truncated interpreter entry");
    interpreter.resize(std::strlen(interpreter.c_str()));
    return std::optional<std::string>(std::move(interpreter));
  }
  return std::optional<std::string>{};
}

}  // namespace takosumi::confine
