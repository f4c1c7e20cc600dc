#pragma once
// The body of POST /api/v1/capsules/{consumerId}/dependencies (docs/passing-values.md), read and
// checked against the two Capsules it joins.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/json_fields.hpp"
#include "controlplane/store/model/model.hpp"

namespace takosumi::controlplane {

struct DependencyRequest {
  std::string producer_capsule_id;             // empty when output_share_id is given
  std::optional<std::string> output_share_id;  // a producer in another Workspace
  std::map<std::string, protocol::OutputMapping> outputs;  // consumer variable → producer Output
};

// {"producerCapsuleId" | "outputShareId", "outputs": {variable: {"from", "type"?, "required"?}}}:
// exactly one of the two sources; 1 to 256 variables, each an OpenTofu variable name; `from` a
// public Output name; `type` string, number, bool or any (default any); `required` true unless
// false. invalid_argument naming the field.
Result<DependencyRequest> parse_dependency_request(const json::object& body);

// invalid_argument unless the producer is another Capsule of the consumer's Workspace, or
// `share` (the request's OutputShare) is active and shared with the consumer's Workspace; every
// `from` is one of the producer's public Outputs (a sensitive Output never is) and, through a
// share, one the share names; and no variable is one the consumer already sets (its variables,
// sensitive variables or other Dependencies). A pending or revoked share is a conflict.
Status check_dependency(const DependencyRequest& req, const Capsule& consumer,
                        const Capsule& producer, const OutputShare* share,
                        const std::vector<Dependency>& consumer_has);

// invalid_argument when a mapping takes an Output the producer's module marks sensitive (its
// latest apply reported it so: `sensitive` lists those public names). Such an Output is never
// published, so it could only ever fail the consumer's Runs; a secret that two Capsules need goes
// through a Connection assigned to both.
Status check_not_sensitive(const DependencyRequest& req, const Capsule& producer,
                           const std::vector<std::string>& sensitive);

}  // namespace takosumi::controlplane
