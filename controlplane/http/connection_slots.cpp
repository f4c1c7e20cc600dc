#include "controlplane/http/connection_slots.hpp"

#include <algorithm>

namespace takosumi::controlplane {

ConnectionSlots::Grant ConnectionSlots::admit(const std::string& client) {
  Grant grant;
  if (open_from(client) >= limits_.per_client) {
    grant.evicted = evict_oldest(&client);
    if (!grant.evicted) return Grant{std::nullopt, std::nullopt, Refusal::per_client};
  } else if (slots_.size() >= limits_.total) {
    grant.evicted = evict_oldest(nullptr);
    if (!grant.evicted) return Grant{std::nullopt, std::nullopt, Refusal::total};
  }
  const Id id = next_id_++;
  slots_.push_back(Slot{id, client});
  ++per_client_[client];
  grant.id = id;
  return grant;
}

std::optional<ConnectionSlots::Id> ConnectionSlots::evict_oldest(const std::string* client) {
  auto victim = std::ranges::find_if(slots_, [&](const Slot& s) {
    return s.waiting && !s.authenticated && (!client || s.client == *client);
  });
  if (victim == slots_.end()) return std::nullopt;
  const Id id = victim->id;
  release(id);
  return id;
}

void ConnectionSlots::set_waiting(Id id, bool waiting) {
  if (auto it = find(id); it != slots_.end()) it->waiting = waiting;
}

void ConnectionSlots::set_authenticated(Id id) {
  if (auto it = find(id); it != slots_.end()) it->authenticated = true;
}

bool ConnectionSlots::waiting(Id id) const {
  auto it = find(id);
  return it != slots_.end() && it->waiting;
}

void ConnectionSlots::release(Id id) {
  auto it = find(id);
  if (it == slots_.end()) return;
  if (auto count = per_client_.find(it->client); count != per_client_.end() && --count->second == 0)
    per_client_.erase(count);
  slots_.erase(it);
}

std::size_t ConnectionSlots::open_from(const std::string& client) const {
  auto it = per_client_.find(client);
  return it == per_client_.end() ? 0 : it->second;
}

ConnectionSlots::Slots::iterator ConnectionSlots::find(Id id) {
  return std::ranges::find(slots_, id, &Slot::id);
}

ConnectionSlots::Slots::const_iterator ConnectionSlots::find(Id id) const {
  return std::ranges::find(slots_, id, &Slot::id);
}

}  // namespace takosumi::controlplane
