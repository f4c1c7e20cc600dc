#pragma once
// The end of an apply: the Outputs a Capsule publishes, from the new state's outputs — what the
// allowlist maps, never a sensitive value, never a value that looks like a credential or holds a
// secret of the Run.
#include <map>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "common/error.hpp"
#include "protocol/job_manifest.hpp"
#include "protocol/run_report.hpp"
#include "redaction/secret_set.hpp"

namespace takosumi::runner {

struct PublishedOutputs {
  boost::json::object outputs;                     // public name → value
  std::vector<protocol::RefusedOutput> refused;    // names and why, never a value
  std::vector<std::string> notices;                // for the Run's log
};

// state_outputs has `tofu output -json`'s shape (runner/state/state_document.hpp state_outputs).
// Their values join secrets first (a value seen here is redacted from the log from now on). The
// allowlist and `sensitive` are the module author's promises; a value that still looks like a
// credential is refused whatever was promised. output_refused when a required Output is refused
// that way; limit_exceeded past protocol::kMaxPublishedOutputsBytes; filter_outputs' errors. What
// was refused and said up to a failure stays in published (the Run's report and log keep it).
Status publish_outputs(const boost::json::object& state_outputs,
                       const std::map<std::string, protocol::OutputMapping>& allowlist,
                       redaction::SecretSet& secrets, PublishedOutputs& published);

}  // namespace takosumi::runner
