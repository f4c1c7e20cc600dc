#include "redaction/report_redaction.hpp"

#include "redaction/redaction.hpp"

namespace takosumi::redaction {

void redact_report(protocol::RunReport& report, const SecretSet& secrets) {
  auto scrub = [&](std::string& text) { text = redact_text(secrets, text); };
  scrub(report.failure_message);
  for (auto& c : report.resource_changes) scrub(c.address);
  for (auto& m : report.data_loss) {
    scrub(m.address);
    scrub(m.reason);
  }
  if (report.drift)
    for (auto& d : report.drift->resources) {
      scrub(d.address);
      for (auto& a : d.attributes) scrub(a);
    }
  for (auto& r : report.refused_outputs) scrub(r.reason);
}

}  // namespace takosumi::redaction
