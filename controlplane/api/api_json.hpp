#pragma once
// camelCase JSON views of the domain records for the public API. Never includes secrets: no
// tokens, no lease data, no DEKs, no Connection or sensitive variable values (names only); Run
// JSON carries no Outputs (those live at /capsules/{id}/outputs).
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <optional>
#include <vector>

#include "controlplane/store/audit_log.hpp"
#include "controlplane/store/model/model.hpp"

namespace takosumi::controlplane {

// The value, or null.
boost::json::value optional_value(const std::optional<std::string>& s);
boost::json::value optional_value(const std::optional<std::int64_t>& v);
// A time as every public answer gives it: RFC 3339 in UTC ("2026-12-03T17:04:05Z"), null when
// absent. The store keeps seconds since the epoch.
boost::json::value time_value(std::int64_t unix_seconds);
boost::json::value time_value(const std::optional<std::int64_t>& unix_seconds);
// Ids and names as a JSON array of strings.
boost::json::array string_array(const std::vector<std::string>& items);

boost::json::object to_json(const Workspace& ws);
// Without needsAttention/attention: the public API adds those (capsule_attention.hpp).
boost::json::object to_json(const Capsule& capsule);
boost::json::object to_json(const Run& run);
boost::json::object to_json(const StateVersion& sv);
boost::json::object to_json(const Dependency& dependency);
boost::json::object to_json(const OutputShare& share);
// "status" is computed at `now`: a Connection expires without anyone writing to it.
boost::json::object to_json(const Connection& connection, std::int64_t now);
boost::json::object to_json(const AuditEvent& event);
boost::json::object logs_to_json(const std::string& run_id, const std::vector<LogChunk>& chunks);

template <class T>
boost::json::array to_json_array(const std::vector<T>& items) {
  boost::json::array a;
  for (const auto& item : items) a.push_back(to_json(item));
  return a;
}

}  // namespace takosumi::controlplane
