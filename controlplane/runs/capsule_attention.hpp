#pragma once
// What about a Capsule needs a person: a current StateVersion kept from an apply that did not
// finish (partial_state), applies that started and were never reported back (apply_stranded),
// producers whose published Outputs are not those its latest plan took (upstream_changed), and
// a restored Capsule whose Connections were not recreated yet (connections_missing).
// Computed on every read, so it clears itself: a later succeeded apply makes the current
// StateVersion whole, a stranded apply ends when its agent reports or it is cancelled, and a
// new plan takes the producers' current Outputs.
#include <boost/json/array.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "controlplane/store/model/model.hpp"
#include "controlplane/store/stores.hpp"

namespace takosumi::controlplane {

namespace attention_code {
inline constexpr std::string_view kPartialState = "partial_state";
inline constexpr std::string_view kApplyStranded = "apply_stranded";
inline constexpr std::string_view kUpstreamChanged = "upstream_changed";
inline constexpr std::string_view kConnectionsMissing = "connections_missing";
inline constexpr std::string_view kStateMissing = "state_missing";
// An offline Run's result came back after the Capsule moved on and was kept, not recorded.
inline constexpr std::string_view kResultKept = "result_kept";
}  // namespace attention_code

struct Attention {
  std::string code;  // attention_code
  std::string run_id;
  std::optional<std::string> state_version_id;  // partial_state
  std::optional<std::int64_t> generation;       // partial_state
  std::optional<std::string> agent_id;          // apply_stranded
  std::optional<std::string> dependency_id;        // upstream_changed
  std::optional<std::string> producer_capsule_id;  // upstream_changed
  std::optional<std::string> outputs_sha256;       // upstream_changed: the producer's Outputs now
  std::string message;
};

// Pure. `current` is the Capsule's current StateVersion and `creator` the Run that stored it;
// `running` are the Capsule's running Runs, judged stranded at `now`.
std::vector<Attention> capsule_attention(const std::optional<StateVersion>& current,
                                         const std::optional<Run>& creator,
                                         const std::vector<Run>& running, std::int64_t now);

// For each of the Capsule's Dependencies whose producer publishes other Outputs than the
// Capsule's latest succeeded plan took (or that plan predates the Dependency): upstream_changed.
// Nothing before the Capsule's first succeeded plan.
Result<std::vector<Attention>> upstream_changes(const Stores& stores, const Capsule& capsule);

// Reads what capsule_attention needs from the stores, and adds upstream_changes.
Result<std::vector<Attention>> load_capsule_attention(const Stores& stores, const Capsule& capsule,
                                                      std::int64_t now);

boost::json::array to_json(const std::vector<Attention>& attention);

}  // namespace takosumi::controlplane
