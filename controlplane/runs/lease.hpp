#pragma once
// The lease check, written once: every call an agent makes about a Run it was given (heartbeat,
// uploads, logs, the apply phase, release, complete) goes through these pure predicates.
// Expiry is not part of holding: a lease that expired and that nobody re-claimed still lets its
// agent report what it did; only a call that must not start anything new asks lease_live too.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "controlplane/store/model/model.hpp"

namespace takosumi::controlplane {

// What an agent presents with a call: itself, the token its claim returned and, when the call
// names one, the attempt it speaks for.
struct PresentedLease {
  std::string_view agent_id;
  std::string_view token;
  std::optional<std::int64_t> attempt;
};

// `lease` is the one the Run was last given: same agent, same token (compared by its SHA-256,
// the only form stored) and, when the call names an attempt, the Run's current attempt. Says
// nothing about the Run's status.
bool is_lease_of(const Run& run, const PresentedLease& lease);

// The agent holds the Run's current lease: is_lease_of and the Run is running.
bool holds_lease(const Run& run, const PresentedLease& lease);

// The lease runs past `now`. Once it does not, the Run may be claimed by another agent at any
// moment (unless it is stranded).
bool lease_live(const Run& run, std::int64_t now);

// A stranded apply that was cancelled while its agent was away: the Run ended, but its agent may
// still bring the state the apply changed (kept as a partial StateVersion).
bool cancelled_while_stranded(const Run& run);

// The refusal of every failed lease check (HTTP 409 lease_lost).
std::unexpected<Error> lease_lost(std::string_view run_id);

}  // namespace takosumi::controlplane
