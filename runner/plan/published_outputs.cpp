#include "runner/plan/published_outputs.hpp"

#include <boost/json/serialize.hpp>

#include "common/error_codes.hpp"
#include "common/failure_codes.hpp"
#include "redaction/credential_check.hpp"
#include "redaction/sensitive_values.hpp"
#include "runner/plan/output_filter.hpp"

namespace takosumi::runner {
namespace {

// Takes out of published every value that looks like a credential; output_refused naming the
// required ones among them.
Status refuse_credentials(PublishedOutputs& published,
                          const std::map<std::string, protocol::OutputMapping>& allowlist,
                          const redaction::SecretSet& secrets) {
  std::vector<std::string> required;
  for (auto it = published.outputs.begin(); it != published.outputs.end();) {
    const std::string name(it->key());
    auto reason = redaction::credential_reason(it->value(), secrets);
    if (!reason) {
      ++it;
      continue;
    }
    published.notices.push_back("output " + name + " not published: its value looks like a credential (" +
                                *reason + ")");
    published.refused.push_back(protocol::RefusedOutput{name, *reason});
    if (auto m = allowlist.find(name); m != allowlist.end() && m->second.required) required.push_back(name);
    it = published.outputs.erase(it);
  }
  if (required.empty()) return {};
  std::string names;
  for (const auto& n : required) names += (names.empty() ? "" : ", ") + n;
  return fail(errc::kOutputRefused, "required output " + names +
                                        " looks like a credential and is not published; map a "
                                        "non-secret value or mark the output sensitive");
}

}  // namespace

Status publish_outputs(const boost::json::object& state_outputs,
                       const std::map<std::string, protocol::OutputMapping>& allowlist,
                       redaction::SecretSet& secrets, PublishedOutputs& published) {
  redaction::collect_output_secrets(state_outputs, secrets);
  auto filtered = filter_outputs(boost::json::serialize(state_outputs), allowlist);
  if (!filtered) return std::unexpected(filtered.error());
  for (const auto& warning : filtered->warnings) published.notices.push_back("warning: " + warning);
  for (const auto& name : filtered->sensitive)
    published.refused.push_back(protocol::RefusedOutput{name, std::string(protocol::kSensitiveOutputReason)});
  published.outputs = std::move(filtered->outputs);
  TAKOSUMI_TRY(refuse_credentials(published, allowlist, secrets));
  if (const auto bytes = boost::json::serialize(published.outputs).size();
      bytes > protocol::kMaxPublishedOutputsBytes)
    return fail(errc::kLimitExceeded,
                "the mapped Outputs are " + std::to_string(bytes) + " bytes together, more than " +
                    std::to_string(protocol::kMaxPublishedOutputsBytes) +
                    " a control plane publishes; map smaller values");
  return {};
}

}  // namespace takosumi::runner
