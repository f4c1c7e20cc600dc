#include "controlplane/runs/workspace_graph.hpp"

#include <map>

namespace takosumi::controlplane {

std::vector<std::string> graph_order(const std::vector<Capsule>& capsules,
                                     const std::vector<Dependency>& dependencies) {
  std::set<std::string> present;
  for (const auto& c : capsules) present.insert(c.id);
  // Kahn's algorithm; each pass takes the first Capsule (in the given order) with no producer
  // left, so unrelated Capsules keep their order. Quadratic, for Workspaces of hundreds.
  std::map<std::string, int> waiting_on;
  for (const auto& d : dependencies)
    if (present.contains(d.producer_capsule_id) && present.contains(d.consumer_capsule_id))
      ++waiting_on[d.consumer_capsule_id];
  std::vector<std::string> order;
  std::set<std::string> placed;
  while (order.size() < capsules.size()) {
    const Capsule* next = nullptr;
    for (const auto& c : capsules)
      if (!placed.contains(c.id) && waiting_on[c.id] == 0) {
        next = &c;
        break;
      }
    if (next == nullptr) break;  // a cycle: impossible, but never loop on one
    order.push_back(next->id);
    placed.insert(next->id);
    for (const auto& d : dependencies)
      if (d.producer_capsule_id == next->id && present.contains(d.consumer_capsule_id))
        --waiting_on[d.consumer_capsule_id];
  }
  return order;
}

std::set<std::string> with_downstream(const std::set<std::string>& selected,
                                      const std::vector<Dependency>& dependencies) {
  std::set<std::string> out = selected;
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& d : dependencies)
      if (out.contains(d.producer_capsule_id) && out.insert(d.consumer_capsule_id).second)
        grew = true;
  }
  return out;
}

std::vector<std::string> producers_among(const std::string& consumer,
                                         const std::set<std::string>& among,
                                         const std::vector<Dependency>& dependencies) {
  std::vector<std::string> out;
  for (const auto& d : dependencies)
    if (d.consumer_capsule_id == consumer && among.contains(d.producer_capsule_id))
      out.push_back(d.producer_capsule_id);
  return out;
}

}  // namespace takosumi::controlplane
