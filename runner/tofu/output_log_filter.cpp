#include "runner/tofu/output_log_filter.hpp"

namespace takosumi::runner {
namespace {

constexpr std::string_view kNotice =
    "takosumi: output values withheld from the log; published Outputs are the mapped ones";

bool indented_or_blank(std::string_view line) {
  return line.empty() || line.front() == ' ' || line.front() == '\t';
}

}  // namespace

void OutputLogFilter::operator()(std::string_view line) {
  if (!next_) return;
  switch (section_) {
    case Section::plan_changes:
      // The plan's output block is indented; the first flush-left line ends it.
      if (indented_or_blank(line)) return;
      section_ = Section::none;
      break;
    case Section::applied_outputs:
      // apply prints its outputs last, flush-left ("name = value"): the rest is withheld.
      return;
    case Section::none:
      break;
  }
  if (line == "Changes to Outputs:") {
    section_ = Section::plan_changes;
    next_(kNotice);
    return;
  }
  if (line == "Outputs:") {
    section_ = Section::applied_outputs;
    next_(kNotice);
    return;
  }
  next_(line);
}

}  // namespace takosumi::runner
