#pragma once
// A Capsule's published Outputs: its stored Outputs that its outputAllowlist maps now, with the
// right type (a sensitive Output is never stored). The one answer to "what does this Capsule
// publish", for GET /api/v1/capsules/{id}/outputs, its Dependencies' consumers and their
// upstream_changed attention.
#include <boost/json/object.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "controlplane/store/catalog_store.hpp"
#include "controlplane/store/state_store.hpp"

namespace takosumi::controlplane {

struct PublishedOutputs {
  std::optional<std::string> state_version_id;  // the StateVersion the Outputs came from
  std::int64_t generation = 0;
  boost::json::object values;
  std::string sha256;  // of `values` as serialized: what a consumer's Run records
};

Result<PublishedOutputs> published_outputs(const Capsule& capsule, StateStore& states);

// What the consumer of `dependency` may see of `published`: all of it inside a Workspace; through
// an OutputShare only the Outputs the Dependency maps, digested alone, and nothing of the other
// Workspace's StateVersions — the receiving side learns no more than the values it was given.
PublishedOutputs seen_through(const Dependency& dependency, PublishedOutputs published);

}  // namespace takosumi::controlplane
