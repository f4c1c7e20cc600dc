#include "controlplane/runs/data_loss.hpp"

#include <boost/json/parse.hpp>

#include "common/error_codes.hpp"
#include "protocol/api_error_codes.hpp"

namespace takosumi::controlplane {
namespace {

namespace json = boost::json;

std::string string_field(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

}  // namespace

Result<std::vector<protocol::DataLossMark>> stored_data_loss(const Run& run) {
  std::vector<protocol::DataLossMark> out;
  if (!run.data_loss_json) return out;
  boost::system::error_code ec;
  json::value v = json::parse(*run.data_loss_json, ec);
  if (ec || !v.is_array())
    return fail(errc::kInternal, "run " + run.id + ": stored dataLoss marks are corrupt");
  for (const auto& item : v.get_array()) {
    if (!item.is_object()) continue;
    const auto& o = item.get_object();
    out.push_back({string_field(o, "address"), string_field(o, "type"), string_field(o, "action"),
                   string_field(o, "reason")});
  }
  return out;
}

Status check_data_loss_accepted(const Run& plan, bool accepted) {
  auto stored = stored_data_loss(plan);
  if (!stored) return std::unexpected(stored.error());
  const auto& marks = *stored;
  if (marks.empty() || accepted) return {};
  std::string list;
  for (const auto& m : marks) {
    if (!list.empty()) list += ", ";
    list += m.address + " (" + m.action + (m.reason.empty() ? "" : ": " + m.reason) + ")";
  }
  return fail(api_errc::kDataLossNotAccepted,
              "run " + plan.id + " would lose the data held by " + std::to_string(marks.size()) +
                  (marks.size() == 1 ? " resource: " : " resources: ") + list +
                  ". Review the plan (GET /api/v1/runs/" + plan.id +
                  ") and, if that loss is intended, apply again with {\"acceptDataLoss\": true}");
}

}  // namespace takosumi::controlplane
