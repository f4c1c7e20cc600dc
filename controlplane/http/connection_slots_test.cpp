// Who gives up a connection slot: the oldest connection that never authenticated and is waiting
// for headers, within the client's own connections at its per-client limit; never one that has
// authenticated or is busy with a request.
#include "controlplane/http/connection_slots.hpp"

#include <gtest/gtest.h>

namespace takosumi::controlplane {
namespace {

using Refusal = ConnectionSlots::Refusal;

TEST(ConnectionSlots, TheOldestUnauthenticatedWaitingConnectionMakesRoom) {
  ConnectionSlots slots({3, 3});
  const auto agent = *slots.admit("10.0.0.1").id;
  slots.set_waiting(agent, false);
  slots.set_authenticated(agent);
  slots.set_waiting(agent, true);  // idle between two requests: still keeps its slot
  const auto busy = *slots.admit("10.0.0.2").id;
  slots.set_waiting(busy, false);  // its request is being handled
  const auto idle = *slots.admit("10.0.0.3").id;

  auto grant = slots.admit("10.0.0.4");
  ASSERT_TRUE(grant.id);
  EXPECT_EQ(grant.evicted, idle);
  EXPECT_EQ(slots.open(), 3u);
  EXPECT_FALSE(slots.waiting(idle));
  // The newcomer waits for headers and never authenticated: it is next.
  EXPECT_EQ(slots.admit("10.0.0.5").evicted, grant.id);
  slots.release(idle);  // the evicted session ends later: nothing to give back twice
  EXPECT_EQ(slots.open(), 3u);
}

TEST(ConnectionSlots, WithNothingToEvictTheNewcomerIsRefused) {
  ConnectionSlots slots({2, 2});
  for (const char* client : {"10.0.0.1", "10.0.0.2"}) {
    const auto id = *slots.admit(client).id;
    slots.set_authenticated(id);
  }
  auto refused = slots.admit("10.0.0.3");
  EXPECT_FALSE(refused.id);
  EXPECT_FALSE(refused.evicted);
  EXPECT_EQ(refused.refused, Refusal::total);
  EXPECT_EQ(slots.open_from("10.0.0.3"), 0u);
}

TEST(ConnectionSlots, AClientAtItsLimitGivesUpOnlyItsOwnSlots) {
  ConnectionSlots slots({10, 2});
  const auto other = *slots.admit("10.0.0.9").id;  // older, unauthenticated, another client
  const auto first = *slots.admit("10.0.0.1").id;
  const auto second = *slots.admit("10.0.0.1").id;
  auto grant = slots.admit("10.0.0.1");
  ASSERT_TRUE(grant.id);
  EXPECT_EQ(grant.evicted, first);
  EXPECT_TRUE(slots.waiting(other));
  EXPECT_EQ(slots.open_from("10.0.0.1"), 2u);

  slots.set_authenticated(second);
  slots.set_authenticated(*grant.id);
  auto refused = slots.admit("10.0.0.1");
  EXPECT_FALSE(refused.id);
  EXPECT_EQ(refused.refused, Refusal::per_client);
  EXPECT_TRUE(slots.admit("10.0.0.2").id) << "other clients still get in";
  slots.release(second);
  EXPECT_TRUE(slots.admit("10.0.0.1").id);
}

}  // namespace
}  // namespace takosumi::controlplane
