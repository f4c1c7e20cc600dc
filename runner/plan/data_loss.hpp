#pragma once
// Data-loss marks on a plan: a deleted or replaced resource whose TYPE holds data (a database,
// bucket, volume, file …) loses what it stores when the plan is applied. Pure functions.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/run_report.hpp"

namespace takosumi::runner {

// Globs on the resource type (`*` matches any run of characters, everything else literally):
// databases, buckets and objects, volumes and disks, file systems, tables, caches, snapshots,
// and hashicorp/local's files.
const std::vector<std::string>& default_data_loss_patterns();

// True when text matches pattern as a whole; `*` is the only wildcard.
bool glob_match(std::string_view pattern, std::string_view text);

// One mark per change that deletes (action "delete") or replaces (create and delete in either
// order: "replace") a resource whose type matches a pattern; the first matching pattern is
// named in the reason. Empty patterns means default_data_loss_patterns(). action_reasons
// (address → OpenTofu's action_reason, e.g. "delete_because_no_resource_config") is appended
// to the reason when present. Forget, create, update and read are never marked.
std::vector<protocol::DataLossMark> mark_data_loss(
    const std::vector<protocol::ResourceChange>& changes,
    const std::vector<std::string>& patterns,
    const std::map<std::string, std::string>& action_reasons = {});

}  // namespace takosumi::runner
