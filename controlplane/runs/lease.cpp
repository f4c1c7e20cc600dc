#include "controlplane/runs/lease.hpp"

#include "common/error_codes.hpp"
#include "crypto/random_ids.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::controlplane {

bool is_lease_of(const Run& run, const PresentedLease& lease) {
  if (lease.attempt && *lease.attempt != run.attempt) return false;
  return run.agent_id == lease.agent_id &&
         run.lease_token_sha256 == crypto::token_sha256(lease.token);
}

bool holds_lease(const Run& run, const PresentedLease& lease) {
  return run.status == run_status::kRunning && is_lease_of(run, lease);
}

bool lease_live(const Run& run, std::int64_t now) {
  return run.lease_expires_at && *run.lease_expires_at > now;
}

bool cancelled_while_stranded(const Run& run) {
  return run.status == run_status::kCancelled && run.apply_started_attempt == run.attempt;
}

std::unexpected<Error> lease_lost(std::string_view run_id) {
  return fail(errc::kLeaseLost,
              "run " + std::string(run_id) + ": this agent no longer holds the lease");
}

}  // namespace takosumi::controlplane
