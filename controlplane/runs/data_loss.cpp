#include "controlplane/runs/data_loss.hpp"

#include "common/error_codes.hpp"

namespace takosumi::controlplane {

Result<std::vector<protocol::DataLossMark>> stored_data_loss(const Run& run) {
  if (!run.data_loss_json) return std::vector<protocol::DataLossMark>{};
  auto marks = protocol::data_loss_from_text(*run.data_loss_json);
  if (!marks)
    return fail(errc::kInternal,
                "run " + run.id + ": stored dataLoss marks are corrupt: " + marks.error().message);
  return marks;
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
  return fail(errc::kDataLossNotAccepted,
              "run " + plan.id + " would lose the data held by " + std::to_string(marks.size()) +
                  (marks.size() == 1 ? " resource: " : " resources: ") + list +
                  ". Review the plan (GET /api/v1/runs/" + plan.id +
                  ") and, if that loss is intended, apply again with {\"acceptDataLoss\": true}");
}

}  // namespace takosumi::controlplane
