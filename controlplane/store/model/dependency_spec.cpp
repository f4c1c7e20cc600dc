#include "controlplane/store/model/dependency_spec.hpp"

#include <algorithm>

#include "common/error_codes.hpp"
#include "protocol/output_type.hpp"
#include "protocol/variables.hpp"

namespace takosumi::controlplane {
namespace {

std::unexpected<Error> invalid(std::string message) {
  return fail(errc::kInvalidArgument, std::move(message));
}

Result<protocol::OutputMapping> mapping_from_json(const std::string& field, const json::value& v) {
  if (!v.is_object()) return invalid(field + " must be an object {from, type, required}");
  const auto& o = v.get_object();
  TAKOSUMI_TRY(check_known_fields(o, {"from", "type", "required"}, field));
  auto from = get_string(o, "from", 128);
  auto type = get_optional_string(o, "type", 16);
  auto required = get_bool_or(o, "required", true);
  if (const Error* e = first_error(from, type, required))
    return std::unexpected(e->with_context(field));
  protocol::OutputMapping m{*from, type->value_or("any"), *required};
  if (!protocol::is_output_type(m.type))
    return invalid(field + ".type \"" + m.type + "\" must be string, number, bool or any");
  return m;
}

}  // namespace

Result<DependencyRequest> parse_dependency_request(const json::object& body) {
  TAKOSUMI_TRY(check_known_fields(body, {"producerCapsuleId", "outputShareId", "outputs"}));
  DependencyRequest req;
  if (body.contains("producerCapsuleId") == body.contains("outputShareId"))
    return invalid("give exactly one of producerCapsuleId (a Capsule of this Workspace) and "
                   "outputShareId (an active OutputShare from another Workspace)");
  if (body.contains("outputShareId")) {
    auto share = get_string(body, "outputShareId", 128);
    if (!share) return std::unexpected(share.error());
    req.output_share_id = std::move(*share);
  } else {
    auto producer = get_string(body, "producerCapsuleId", 128);
    if (!producer) return std::unexpected(producer.error());
    req.producer_capsule_id = std::move(*producer);
  }
  auto outputs = get_object(body, "outputs");
  if (!outputs) return std::unexpected(outputs.error());
  if ((*outputs)->empty() || (*outputs)->size() > protocol::kMaxVariables)
    return invalid("outputs must map 1 to " + std::to_string(protocol::kMaxVariables) +
                   " variables");
  for (const auto& kv : **outputs) {
    const std::string variable(kv.key());
    if (!protocol::is_tofu_identifier(variable))
      return invalid("outputs: \"" + variable + "\" is not an OpenTofu variable name");
    auto mapping = mapping_from_json("outputs." + variable, kv.value());
    if (!mapping) return std::unexpected(mapping.error());
    req.outputs.emplace(variable, std::move(*mapping));
  }
  return req;
}

Status check_dependency(const DependencyRequest& req, const Capsule& consumer,
                        const Capsule& producer, const OutputShare* share,
                        const std::vector<Dependency>& consumer_has) {
  if (share) {
    if (share->to_workspace_id != consumer.workspace_id)
      return invalid("output share " + share->id + " is not shared with this Workspace");
    if (share->status != share_status::kActive)
      return fail(errc::kConflict,
                  "output share " + share->id + " is " + share->status +
                      (share->status == share_status::kPending
                           ? ": the receiving Workspace's owner approves it first"
                           : ": a revoked share passes nothing; ask for a new one"));
  } else if (producer.workspace_id != consumer.workspace_id) {
    return invalid("capsule " + producer.id +
                   " is not in this Workspace: Outputs cross Workspaces only through an OutputShare");
  }
  if (producer.destroyed_at)
    return invalid("capsule " + producer.id + " is destroyed: it publishes nothing any more");
  if (producer.id == consumer.id)
    return fail(errc::kDependencyCycle, "capsule " + consumer.id + " cannot depend on itself");
  for (const auto& d : consumer_has)
    if (d.producer_capsule_id == producer.id)
      return fail(errc::kConflict, "capsule " + consumer.id + " already depends on " + producer.id +
                                       " (dependency " + d.id + "); delete it to replace it");
  for (const auto& [variable, mapping] : req.outputs) {
    if (share && std::ranges::find(share->outputs, mapping.from) == share->outputs.end()) {
      std::string shared;
      for (const auto& name : share->outputs) shared += (shared.empty() ? "" : ", ") + name;
      return invalid("outputs." + variable + ".from \"" + mapping.from +
                     "\" is not shared by output share " + share->id + " (shared: " + shared + ")");
    }
    if (!producer.output_allowlist.contains(mapping.from)) {
      std::string published;
      for (const auto& [name, unused] : producer.output_allowlist)
        published += (published.empty() ? "" : ", ") + name;
      return invalid("outputs." + variable + ".from \"" + mapping.from +
                     "\" is not a public Output of capsule " + producer.id + " (public: " +
                     (published.empty() ? "none" : published) + ")");
    }
    const bool sensitive =
        std::ranges::find(consumer.sensitive_variable_names, variable) !=
        consumer.sensitive_variable_names.end();
    const bool taken = std::ranges::any_of(consumer_has, [&](const Dependency& d) {
      return d.outputs.contains(variable);
    });
    if (consumer.variables.contains(variable) || sensitive || taken)
      return invalid("outputs." + variable + ": capsule " + consumer.id +
                     " already sets variable " + variable +
                     " (variables, sensitiveVariables or another Dependency)");
  }
  return {};
}

Status check_not_sensitive(const DependencyRequest& req, const Capsule& producer,
                           const std::vector<std::string>& sensitive) {
  for (const auto& [variable, mapping] : req.outputs)
    if (std::ranges::find(sensitive, mapping.from) != sensitive.end())
      return invalid("outputs." + variable + ".from \"" + mapping.from + "\": capsule " +
                     producer.id +
                     "'s module marks this Output sensitive, and sensitive Outputs never pass "
                     "to other Capsules; give the secret to both through a Connection");
  return {};
}

}  // namespace takosumi::controlplane
