#include "controlplane/runs/published_outputs.hpp"

#include "common/json_fields.hpp"
#include "controlplane/store/model/capsule_spec.hpp"
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

PublishedOutputs seen_through(const Dependency& dependency, PublishedOutputs published) {
  if (!dependency.output_share_id) return published;
  boost::json::object mapped;
  for (const auto& [variable, mapping] : dependency.outputs)
    if (const auto* v = published.values.if_contains(mapping.from)) mapped[mapping.from] = *v;
  published.sha256 = crypto::sha256_hex(takosumi::serialize(mapped));
  published.values = std::move(mapped);
  published.state_version_id.reset();
  published.generation = 0;
  return published;
}

}  // namespace takosumi::controlplane
