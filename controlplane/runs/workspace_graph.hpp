#pragma once
// The order work in a Workspace follows (the seed: "the order follows the graph"): producers
// before their consumers, over the Workspace's Dependencies. Pure functions of the Capsules and
// Dependencies; Dependencies on a producer outside `capsules` (through an OutputShare, or on a
// Capsule not selected) do not order anything.
#include <set>
#include <string>
#include <vector>

#include "controlplane/store/model/model.hpp"

namespace takosumi::controlplane {

// The ids of `capsules` with every producer before its consumers; Capsules that do not depend on
// each other keep the order they are given in. The graph has no cycle (DependencyStore refuses
// every edge that would close one).
std::vector<std::string> graph_order(const std::vector<Capsule>& capsules,
                                     const std::vector<Dependency>& dependencies);

// `selected` and every Capsule that consumes, directly or through others, one of them.
std::set<std::string> with_downstream(const std::set<std::string>& selected,
                                      const std::vector<Dependency>& dependencies);

// The producers of `consumer` among `among`.
std::vector<std::string> producers_among(const std::string& consumer,
                                         const std::set<std::string>& among,
                                         const std::vector<Dependency>& dependencies);

}  // namespace takosumi::controlplane
