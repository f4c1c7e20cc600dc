#pragma once
// The data-loss rule of apply (docs/state-versions.md): a plan whose report marks data-bearing
// resources for delete or replace is applied only when the apply request accepts that loss.
#include <vector>

#include "common/error.hpp"
#include "controlplane/store/model/model.hpp"
#include "protocol/run_report.hpp"

namespace takosumi::controlplane {

// The marks stored on a Run (its report's dataLoss); empty when none. Stored text that does not
// parse is internal (fail closed: such a plan is never applied as if it had no marks).
Result<std::vector<protocol::DataLossMark>> stored_data_loss(const Run& run);

// Success when the plan has no marks or they are accepted; otherwise data_loss_not_accepted
// naming every marked address and saying how to accept. Pure.
Status check_data_loss_accepted(const Run& plan, bool accepted);

}  // namespace takosumi::controlplane
