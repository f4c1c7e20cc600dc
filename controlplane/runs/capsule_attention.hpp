#pragma once
// What about a Capsule needs a person: a current StateVersion kept from an apply that did not
// finish (partial_state), and applies that started and were never reported back (apply_stranded).
// Computed on every read, so it clears itself: a later succeeded apply makes the current
// StateVersion whole, and a stranded apply ends when its agent reports or it is cancelled.
#include <boost/json/array.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "controlplane/store/model.hpp"
#include "controlplane/store/run_store.hpp"
#include "controlplane/store/state_store.hpp"

namespace takosumi::controlplane {

namespace attention_code {
inline constexpr std::string_view kPartialState = "partial_state";
inline constexpr std::string_view kApplyStranded = "apply_stranded";
}  // namespace attention_code

struct Attention {
  std::string code;  // attention_code
  std::string run_id;
  std::optional<std::string> state_version_id;  // partial_state
  std::optional<std::int64_t> generation;       // partial_state
  std::optional<std::string> agent_id;          // apply_stranded
  std::string message;
};

// Pure. `current` is the Capsule's current StateVersion and `creator` the Run that stored it;
// `running` are the Capsule's running Runs, judged stranded at `now`.
std::vector<Attention> capsule_attention(const std::optional<StateVersion>& current,
                                         const std::optional<Run>& creator,
                                         const std::vector<Run>& running, std::int64_t now);

// Reads what capsule_attention needs from the stores.
Result<std::vector<Attention>> load_capsule_attention(StateStore& states, RunStore& runs,
                                                      std::string_view capsule_id,
                                                      std::int64_t now);

boost::json::array to_json(const std::vector<Attention>& attention);

}  // namespace takosumi::controlplane
