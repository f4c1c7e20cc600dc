#pragma once
// The module both sides plan and apply: 20 terraform_data resources (built into OpenTofu, so the
// figures time OpenTofu and takosumi, not a provider) and one output for the Capsule to publish.
#include <string>

namespace takosumi::bench {

inline std::string bench_module(int resources = 20) {
  std::string text;
  for (int i = 0; i < resources; ++i) {
    const auto n = std::to_string(i);
    text += "resource \"terraform_data\" \"r" + n + "\" {\n  input = \"value-" + n + "\"\n}\n";
  }
  return text + "output \"first\" {\n  value = terraform_data.r0.output\n}\n";
}

}  // namespace takosumi::bench
