#pragma once
// The secrets of one Run attempt: the values of the Capsule's Connections and its sensitive
// variables. The control plane serializes the bundle, seals it (crypto_box_seal) to the claiming
// agent's X25519 key and puts the sealed text into the signed manifest ("secrets"); only that
// agent can open it, and the signature stops anyone from swapping it. Wire shape:
// docs/protocol.md "Secret bundle".
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "common/secret_bytes.hpp"
#include "protocol/git_credential.hpp"

namespace takosumi::protocol {

// env: each value is set as an environment variable of the tofu process.
// files: each value is written to a 0400 file in a 0700 directory inside the Run's workspace,
// and the variable named by its key holds that file's path.
enum class AuthMode { env, files };
std::string_view to_string(AuthMode mode);
std::optional<AuthMode> auth_mode_from_string(std::string_view text);

struct ConnectionSecret {
  std::string id;
  std::string name;
  std::string provider;  // fully qualified provider source address, e.g. registry.opentofu.org/hashicorp/aws
  AuthMode mode = AuthMode::env;
  std::map<std::string, SecretBytes> values;  // credential name → value
};

struct SecretBundle {
  std::vector<ConnectionSecret> connections;
  std::map<std::string, SecretBytes> sensitive_variables;  // OpenTofu variable name → value
  // The Capsule's Connection of kind git, for the source's fetch only (never tofu's).
  std::optional<GitCredential> source;

  bool empty() const { return connections.empty() && sensitive_variables.empty() && !source; }
};

inline constexpr std::size_t kMaxSecretBundleBytes = 512 * 1024;
inline constexpr std::size_t kMaxSecretValueBytes = 64 * 1024;
inline constexpr std::size_t kMaxConnectionsPerRun = 32;
inline constexpr std::size_t kMaxValuesPerConnection = 64;
inline constexpr std::size_t kMaxSensitiveVariables = 128;

// Checks the limits above, every name (credential names: protocol/credential_names.hpp), that a
// credential name is used by one Connection only, and that provider addresses are fully qualified.
// Errors are invalid_argument naming the field.
Status validate_secret_bundle(const SecretBundle& bundle);
// Fully qualified provider source address: hostname/namespace/type, lower case.
bool is_qualified_provider_address(std::string_view address);

// JSON text of the bundle, in memory that is zeroed when dropped.
SecretBytes serialize_secret_bundle(const SecretBundle& bundle);
// Parses and validates; the JSON parser's scratch memory is zeroed before returning. Errors are
// manifest_invalid.
Result<SecretBundle> parse_secret_bundle(std::string_view text);

}  // namespace takosumi::protocol
