#pragma once
// Withholds the output sections of tofu's human-readable output from the Run's log. tofu prints
// the values of *every* output there — plan's "Changes to Outputs:" and apply's final
// "Outputs:" — including outputs the Capsule never mapped; only the allowlist may publish an
// Output, so those sections are replaced by one notice. One filter per tofu invocation.
#include <string_view>

#include "redaction/log_sink.hpp"

namespace takosumi::runner {

class OutputLogFilter {
 public:
  explicit OutputLogFilter(redaction::LogSink next) : next_(std::move(next)) {}
  void operator()(std::string_view line);

 private:
  enum class Section { none, plan_changes, applied_outputs };
  redaction::LogSink next_;
  Section section_ = Section::none;
};

}  // namespace takosumi::runner
