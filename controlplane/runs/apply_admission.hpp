#pragma once
// Apply admission: whether an apply Run may be created for a plan, decided apart from HTTP.
// The rules (docs/state-versions.md): only a succeeded plan or destroy_plan with changes, a plan
// digest and a stored plan artifact, made against the Capsule's current generation, applied at
// most once, and whose data-loss marks the request accepts. A drift_check is never applied.
// Every refusal is conflict except data_loss_not_accepted. Whether the Capsule's Connections are
// usable is checked apart: it holds for every new Run, not only applies.
#include <cstdint>
#include <string_view>

#include "common/error.hpp"
#include "controlplane/store/blob_store.hpp"
#include "controlplane/store/model/model.hpp"
#include "controlplane/store/run_store.hpp"
#include "controlplane/store/state_store.hpp"

namespace takosumi::controlplane {

// What the rules look at, read from the stores by load_apply_candidate.
struct ApplyCandidate {
  Run plan;
  std::int64_t current_generation = 0;  // the Capsule's, 0 before its first StateVersion
  bool plan_artifact_stored = false;    // indexed for the plan Run and present in the blobs
  bool apply_exists = false;            // an apply was already created for this plan
};

// What an admitted apply carries.
struct ApplyAdmission {
  bool data_loss_accepted = false;  // the request accepted marks that the plan has
};

// The plan Run and what the rules need to know about it. not_found for an unknown Run.
Result<ApplyCandidate> load_apply_candidate(RunStore& runs, StateStore& states,
                                            const BlobStore& blobs, std::string_view plan_run_id);

// Every rule but data loss, naming what to do instead. Pure.
Status check_can_apply(const Run& plan, std::int64_t current_generation, bool plan_artifact_stored,
                       bool apply_exists);

// All the rules, data loss last. Pure.
Result<ApplyAdmission> admit_apply(const ApplyCandidate& candidate, bool accept_data_loss);

}  // namespace takosumi::controlplane
