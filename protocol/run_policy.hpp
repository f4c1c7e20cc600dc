#pragma once
// What a Run's module may use, as the control plane states it for a Capsule (inside the signed
// manifest, "policy") and as the agent's pool configuration states it. The agent enforces the
// combination of both (combine()): each side can only take permissions away. Wire shape:
// docs/protocol.md "Run policy".
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "common/json_fields.hpp"

namespace takosumi::protocol {

enum class NetworkMode { unset, full, none };
std::string_view to_string(NetworkMode mode);  // "", "default", "none"
std::optional<NetworkMode> network_mode_from_string(std::string_view text);

struct RunPolicy {
  // Fully qualified provider source addresses, sorted. Without an allow list every provider not
  // denied is allowed; with one, only those listed (an empty list allows none).
  std::optional<std::vector<std::string>> allowed_providers;
  std::vector<std::string> denied_providers;
  // local-exec, remote-exec and file provisioners.
  bool allow_provisioners = false;
  // The `external` data source (hashicorp/external) runs any program the module names.
  bool allow_external_data = false;
  NetworkMode network = NetworkMode::unset;

  bool operator==(const RunPolicy&) const = default;
};

// The Run's effective policy: a provider must be on every allow list there is and on no deny list;
// provisioners and external data need both sides to allow them; network is none when either
// side says none.
RunPolicy combine(const RunPolicy& pool, const RunPolicy& run);

json::object to_json(const RunPolicy& p);
// Checks provider addresses (fully qualified, at most 256 entries each). Errors are
// invalid_argument naming the field.
Result<RunPolicy> run_policy_from_json(const json::object& o);

}  // namespace takosumi::protocol
