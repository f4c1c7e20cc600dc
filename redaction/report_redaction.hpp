#pragma once
// The last pass over a Run's report before it leaves the runner: every free text field goes
// through redact_text (exact secret values, then patterns). Outputs are not touched here — a
// published Output is never silently altered; RunFlow refuses a credential-looking one instead.
#include "protocol/run_report.hpp"
#include "redaction/secret_set.hpp"

namespace takosumi::redaction {

void redact_report(protocol::RunReport& report, const SecretSet& secrets);

}  // namespace takosumi::redaction
