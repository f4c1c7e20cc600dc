#include "runner/plan/data_loss.hpp"

#include <algorithm>

namespace takosumi::runner {
namespace {

bool contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Null when no pattern matches.
const std::string* first_match(const std::vector<std::string>& patterns, std::string_view type) {
  for (const auto& p : patterns)
    if (glob_match(p, type)) return &p;
  return nullptr;
}

}  // namespace

const std::vector<std::string>& default_data_loss_patterns() {
  static const std::vector<std::string> kDefaults{
      "*_db_instance", "*_database*",  "*_db_cluster*",   "*_rds_*",           "*_sql_*",
      "*_bucket",      "*_bucket_object*", "*_s3_*",      "*_storage_*",       "*_volume*",
      "*_disk*",       "*_ebs_*",      "*_efs_*",         "*_file_system*",    "*_filestore*",
      "*_table",       "*dynamodb*",   "*_redis*",        "*_elasticache*",    "*_cache_cluster*",
      "*_snapshot*",   "local_file",   "local_sensitive_file"};
  return kDefaults;
}

// Iterative glob with backtracking to the last `*`: linear in practice, no recursion.
bool glob_match(std::string_view pattern, std::string_view text) {
  std::size_t p = 0, t = 0;
  std::size_t star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::vector<protocol::DataLossMark> mark_data_loss(
    const std::vector<protocol::ResourceChange>& changes, const std::vector<std::string>& patterns,
    const std::map<std::string, std::string>& action_reasons) {
  const auto& effective = patterns.empty() ? default_data_loss_patterns() : patterns;
  std::vector<protocol::DataLossMark> marks;
  for (const auto& c : changes) {
    // Judged from the actions themselves, not is_delete/is_replace, so callers need not classify.
    if (!contains(c.actions, "delete")) continue;
    const std::string* pattern = first_match(effective, c.type);
    if (!pattern) continue;
    std::string reason = "type " + c.type + " matches data-bearing pattern " + *pattern;
    if (auto r = action_reasons.find(c.address); r != action_reasons.end() && !r->second.empty())
      reason += " (" + r->second + ")";
    marks.push_back({c.address, c.type, contains(c.actions, "create") ? "replace" : "delete",
                     std::move(reason)});
  }
  return marks;
}

}  // namespace takosumi::runner
