#pragma once
// Validation of what users send about secrets: Connections (POST /api/v1/connections), a
// Capsule's sensitive variables and its Connection assignment. Pure functions. Errors are
// invalid_argument naming the field, never quoting a value; secret values are moved into
// SecretBytes and their copies in the parsed JSON are zeroed, whether parsing succeeds or not.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "common/secret_bytes.hpp"
#include "controlplane/store/model/model.hpp"
#include "common/json_fields.hpp"

namespace takosumi::controlplane {

using SecretMap = std::map<std::string, SecretBytes>;

struct ConnectionRequest {
  std::string workspace_id;
  std::string name;
  std::string provider;  // kind provider only
  protocol::AuthMode auth_mode = protocol::AuthMode::env;
  SecretMap values;  // credential name → value
  std::optional<std::int64_t> expires_at;
  std::string kind = std::string(connection_kind::kProvider);
};

// {"workspaceId","name","kind"?,"provider","authMode","values":{NAME:"value"},"expiresAt"?};
// expiresAt must lie after `now`. kind "git" (a source credential, protocol/git_credential.hpp)
// takes neither provider nor authMode, and only its own value names.
Result<ConnectionRequest> take_connection_request(boost::json::object& body, std::int64_t now);

// body["sensitiveVariables"]: nullopt when absent. Names follow OpenTofu's variable rule, at most
// 128 entries of at most 64 KiB each.
Result<std::optional<SecretMap>> take_sensitive_variables(boost::json::object& body);
// No sensitive variable may also be one of the plain `variables`.
Status check_no_plain_twin(const SecretMap& sensitive,
                           const protocol::Variables& variables);

// body["connections"]: nullopt when absent; otherwise distinct Connection ids.
Result<std::optional<std::vector<std::string>>> parse_connection_ids(const boost::json::object& body);

// connection_revoked or connection_expired naming the Connection (name and id), or nullopt while
// it is active at `now`.
std::optional<Error> connection_unusable(const Connection& connection, std::int64_t now);

// The refusal of a Connection that is not `workspace_id`'s, the same whether it exists elsewhere
// or not at all; it names neither the other Workspace nor the Connection's name.
std::string foreign_connection_message(std::string_view connection_id,
                                       std::string_view workspace_id);

// The rules for assigning `connections` to a Capsule of `workspace_id`: at most
// kMaxConnectionsPerRun, all of that Workspace (invalid_argument), all active now
// (connection_revoked / connection_expired), and no credential name defined by two of them
// (invalid_argument naming both).
Status check_assignment(std::string_view workspace_id, const std::vector<Connection>& connections,
                        std::int64_t now);

}  // namespace takosumi::controlplane
