#pragma once
// A plan view as a reviewer reads it in a log or on a terminal, the way OpenTofu prints a plan:
// one paragraph per resource (`# address will be updated in place`, then `~ address` and each
// attribute that differs, `+` added, `-` removed, `~` changed, `# forces replacement`), then the
// Outputs that change, then the `Plan:` line. The agent writes it into the Run's log; the CLI
// prints it from GET /api/v1/runs/{id}/plan. Every piece that came from a module or the network is
// passed through one_line first, so no address, key or value can begin a line of its own or steer
// the reader's terminal; colour, when asked for, is added after.
#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/plan_view.hpp"

namespace takosumi::protocol {

struct PlanTextStyle {
  bool colour = false;  // ANSI colour on the symbols, as tofu does on a terminal
  std::size_t max_lines = std::numeric_limits<std::size_t>::max();  // past it, one line counts the rest
  // Resources are what changed outside OpenTofu (a refresh-only plan's drift), not planned changes.
  bool drift = false;
  bool summary = true;  // end with the `Plan:` line (and name the Outputs when only they change)
};

std::vector<std::string> plan_view_lines(const PlanView& view, const PlanTextStyle& style = {});

// Text as one visible line: C0 controls, DEL, C1 controls (UTF-8 C2 80–9F) and the characters
// that print nothing but move or hide text (bidirectional controls, zero-width characters, line
// and paragraph separators, the BOM) become \u escapes. A for_each key is the module's to
// choose: a newline in it would let one line print what looks like several, a right-to-left
// override would make `a -> b` read `b -> a`.
std::string one_line(std::string_view text);

}  // namespace takosumi::protocol
