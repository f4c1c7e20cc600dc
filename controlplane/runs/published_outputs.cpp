#include "controlplane/runs/published_outputs.hpp"

#include "common/json_fields.hpp"
#include "controlplane/store/capsule_spec.hpp"
#include "crypto/sha256.hpp"

namespace takosumi::controlplane {

Result<PublishedOutputs> published_outputs(const Capsule& capsule, StateStore& states) {
  auto stored = states.outputs(capsule.id);
  if (!stored) return std::unexpected(stored.error());
  auto values = filter_outputs(stored->outputs, capsule.output_allowlist);
  if (!values) return std::unexpected(values.error());
  const std::string digest = crypto::sha256_hex(takosumi::serialize(*values));
  return PublishedOutputs{std::move(stored->state_version_id), stored->generation,
                          std::move(*values), digest};
}

}  // namespace takosumi::controlplane
