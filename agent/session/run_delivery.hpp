#pragma once
// Sends a spooled Delivery (agent/durable/run_spool.hpp) to the control plane: the log text it has not
// received, the sealed plan and state, then the completion report. While the control plane is
// unreachable (transport failures, 5xx, 429) every call is retried with exponential backoff and
// jitter, without limit; a restart resumes from the spool. Every step is idempotent on the control
// plane's side (log chunks by sequence number, artifacts by digest, the report per attempt), so a
// repeat after a lost answer never creates a second StateVersion.
//
// Only the report's answer decides: a refused log chunk or upload (the Run may have been completed
// by an earlier try whose answer was lost) goes on to the report, which the control plane
// acknowledges again or refuses with the reason (lease_lost when another attempt holds the Run).
#include <boost/asio/awaitable.hpp>

#include <string>

#include "agent/session/run_services.hpp"

namespace takosumi::agent {

// A run report larger than protocol::kMaxInlineReportBytes is streamed as the body of PUT
// .../report instead of the JSON body of /complete. A report the control plane refuses for its
// size (payload_too_large) is replaced by protocol::result_too_large at once: the Run fails with
// that code instead of being retried or left undeliverable.
boost::asio::awaitable<Status> async_deliver(RunChannel& client, std::string run_id,
                                             Delivery delivery);

// Saves the delivery in the spool, journals the Run as `deliver`, delivers it and settles: once
// acknowledged the spool and the journal entry go; lease_lost holds the entry as `lease_lost` and
// any other refusal as `undeliverable`, both with the spool kept for the operator
// (`takosumi-agent recover`). Returns the delivery's own result.
boost::asio::awaitable<Status> async_settle(RunServices stores, JournalEntry entry,
                                            Delivery delivery);

}  // namespace takosumi::agent
