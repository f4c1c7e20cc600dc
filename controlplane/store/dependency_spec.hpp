#pragma once
// The body of POST /api/v1/capsules/{consumerId}/dependencies (docs/passing-values.md), read and
// checked against the two Capsules it joins.
#include <map>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json_fields.hpp"
#include "controlplane/store/model.hpp"

namespace takosumi::controlplane {

struct DependencyRequest {
  std::string producer_capsule_id;
  std::map<std::string, protocol::OutputMapping> outputs;  // consumer variable → producer Output
};

// {"producerCapsuleId", "outputs": {variable: {"from", "type"?, "required"?}}}: 1 to 256
// variables, each an OpenTofu variable name; `from` a public Output name; `type` string, number,
// bool or any (default any); `required` true unless false. invalid_argument naming the field.
Result<DependencyRequest> parse_dependency_request(const json::object& body);

// invalid_argument unless the producer is another Capsule of the consumer's Workspace (across
// Workspaces an OutputShare is needed), every `from` is one of the producer's public Outputs (a
// sensitive Output never is), and no variable is one the consumer already sets (its variables,
// sensitive variables or other Dependencies).
Status check_dependency(const DependencyRequest& req, const Capsule& consumer,
                        const Capsule& producer, const std::vector<Dependency>& consumer_has);

}  // namespace takosumi::controlplane
