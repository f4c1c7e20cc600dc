#pragma once
// Keeps the agent's voice its own. Everything a Run's processes print reaches the log beside the
// agent's own lines ("takosumi: …", the sealed plan between them), and any process of the Run —
// a provider, an external program, a provisioner, one writing to tofu's stdout through /proc —
// can print a line that looks like one. Such a line is quoted ("> takosumi: …"), so a line
// beginning with "takosumi" is always the agent's.
#include <string>
#include <string_view>

namespace takosumi::runner {

// line unchanged, or with "> " in front when it could pass for one of the agent's lines.
std::string in_process_voice(std::string_view line);

}  // namespace takosumi::runner
