#include "agent/durable/agent_credential_file.hpp"

#include <cstring>

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "crypto/keys.hpp"

namespace takosumi::agent {

Result<std::optional<SecretBytes>> AgentCredentialFile::load() const {
  auto text = crypto::read_private_file(path_, 1024);
  if (!text && text.error().code == errc::kNotFound) return std::optional<SecretBytes>();
  if (!text) return std::unexpected(text.error());
  std::size_t n = text->size();
  while (n > 0 && (text->data()[n - 1] == '\n' || text->data()[n - 1] == '\r')) --n;
  if (n == 0) return std::optional<SecretBytes>();
  return std::optional<SecretBytes>(SecretBytes(text->span().first(n)));
}

Status AgentCredentialFile::store(const SecretBytes& token) const {
  SecretBytes line(token.size() + 1);
  std::memcpy(line.data(), token.data(), token.size());
  line.data()[token.size()] = '\n';
  return write_file_atomic(path_, line.reveal_as_string(), 0600);
}

Status AgentCredentialFile::forget() const {
  std::error_code ec;
  std::filesystem::remove(path_, ec);
  if (ec) return fail(errc::kIoError, "remove " + path_.string() + ": " + ec.message());
  return {};
}

}  // namespace takosumi::agent
