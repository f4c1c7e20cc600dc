#pragma once
// Who holds the HTTP server's connection slots, and who gives one up for a newcomer.
// - At most `total` connections at once, and at most `per_client` from one client address.
// - A connection that has never carried an authenticated request and is waiting for a request's
//   headers is evictable. When a limit is reached, the oldest evictable connection (of the same
//   client, for the per-client limit) gives up its slot for the new one; with none, the new one is
//   refused. So idle or slow unauthenticated clients cannot lock out those with credentials, and a
//   connection that has authenticated keeps its slot.
// Pure bookkeeping: closing the evicted connection's socket is the caller's job. Not thread-safe.
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <string>

namespace takosumi::controlplane {

class ConnectionSlots {
 public:
  using Id = std::uint64_t;
  struct Limits {
    std::size_t total = 256;
    std::size_t per_client = 64;
  };
  enum class Refusal { none, total, per_client };
  // The answer to a new connection: a slot (id) or a refusal; evicted names the connection that
  // gave up its slot for it (already released here).
  struct Grant {
    std::optional<Id> id;
    std::optional<Id> evicted;
    Refusal refused = Refusal::none;
  };

  explicit ConnectionSlots(Limits limits) : limits_(limits) {}

  Grant admit(const std::string& client);
  // A new slot starts waiting for headers and unauthenticated. Unknown ids are ignored.
  void set_waiting(Id id, bool waiting);
  void set_authenticated(Id id);
  bool waiting(Id id) const;
  // Gives the slot back; a no-op for an evicted (already released) or unknown id.
  void release(Id id);
  std::size_t open() const { return slots_.size(); }
  std::size_t open_from(const std::string& client) const;

 private:
  struct Slot {
    Id id;
    std::string client;
    bool waiting = true;
    bool authenticated = false;
  };
  using Slots = std::list<Slot>;  // in the order the connections were admitted: oldest first

  // The oldest evictable slot (of client, when given), released; nullopt when there is none.
  std::optional<Id> evict_oldest(const std::string* client);
  Slots::iterator find(Id id);
  Slots::const_iterator find(Id id) const;

  Limits limits_;
  Slots slots_;
  std::map<std::string, std::size_t> per_client_;
  Id next_id_ = 1;
};

}  // namespace takosumi::controlplane
