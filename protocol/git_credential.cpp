#include "protocol/git_credential.hpp"

#include <algorithm>

#include "common/error_codes.hpp"

namespace takosumi::protocol {
namespace {

std::unexpected<Error> invalid(std::string message) {
  return fail(errc::kInvalidArgument, "a Connection of kind git " + std::move(message));
}

bool printable_user(std::string_view user) {
  return !user.empty() && user.size() <= 128 && std::ranges::all_of(user, [](char c) {
    return static_cast<unsigned char>(c) > 0x20 && c != 0x7f && c != ':' && c != '@';
  });
}

}  // namespace

Status validate_git_values(const std::map<std::string, SecretBytes>& values) {
  for (const auto& [name, value] : values)
    if (name != kGitToken && name != kGitUsername && name != kGitSshPrivateKey && name != kGitSshKnownHosts)
      return invalid("takes only TOKEN, or SSH_PRIVATE_KEY and SSH_KNOWN_HOSTS, and USERNAME; not " + name);
  const bool token = values.contains(std::string(kGitToken));
  const bool key = values.contains(std::string(kGitSshPrivateKey));
  const bool hosts = values.contains(std::string(kGitSshKnownHosts));
  if (token == key)
    return invalid("needs either TOKEN (https) or SSH_PRIVATE_KEY (ssh), not " +
                   std::string(token ? "both" : "neither"));
  if (key != hosts)
    return invalid(key ? "with SSH_PRIVATE_KEY needs SSH_KNOWN_HOSTS: the host keys the server may "
                         "present, as known_hosts lines (ssh-keyscan prints them)"
                       : "takes SSH_KNOWN_HOSTS only with SSH_PRIVATE_KEY");
  for (const auto& [name, value] : values)
    if (value.empty()) return invalid("has an empty " + name);
  if (auto user = values.find(std::string(kGitUsername));
      user != values.end() && !printable_user(user->second.reveal_as_string()))
    return invalid("has a USERNAME with spaces, \":\", \"@\" or control characters");
  return {};
}

Result<GitCredential> git_credential_from_values(std::string connection_id,
                                                 const std::map<std::string, SecretBytes>& values) {
  TAKOSUMI_TRY(validate_git_values(values));
  GitCredential out;
  out.connection_id = std::move(connection_id);
  const auto get = [&](std::string_view name) -> const SecretBytes* {
    auto it = values.find(std::string(name));
    return it == values.end() ? nullptr : &it->second;
  };
  if (const auto* token = get(kGitToken)) out.token = token->clone();
  if (const auto* key = get(kGitSshPrivateKey)) out.private_key = key->clone();
  if (const auto* hosts = get(kGitSshKnownHosts)) out.known_hosts = std::string(hosts->reveal_as_string());
  if (const auto* user = get(kGitUsername))
    out.username = std::string(user->reveal_as_string());
  else
    out.username = out.is_ssh() ? "git" : "x-access-token";
  return out;
}

}  // namespace takosumi::protocol
