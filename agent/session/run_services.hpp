#pragma once
// What both the agent's Run paths use, a live Run (run_session.hpp) and a Run a restarted agent
// finishes (run_recovery.hpp): the Run's channel (run_channel.hpp), the journal and spool on disk, the clock and the
// pool for blocking work. References: the daemon owns them and outlives every Run.
#include <boost/asio/thread_pool.hpp>

#include "agent/session/run_channel.hpp"
#include "agent/durable/run_journal.hpp"
#include "agent/durable/run_spool.hpp"
#include "common/clock.hpp"

namespace takosumi::agent {

struct RunServices {
  RunChannel& client;
  const RunJournal& journal;
  const RunSpool& spool;
  const Clock& clock;
  boost::asio::thread_pool& blocking;
};

}  // namespace takosumi::agent
