// CapsuleApi: a Capsule's secrets, its Connection assignment and sensitive variables. Values go
// from the request straight into SecretBytes and are sealed to the storage key; no answer, error
// or audit detail carries one.
#include "common/error_codes.hpp"
#include "common/strict_json.hpp"
#include "controlplane/api/api_json.hpp"
#include "controlplane/api/capsule_api.hpp"
#include "controlplane/store/model/capsule_spec.hpp"
#include "controlplane/store/model/connection_spec.hpp"
#include "controlplane/store/keys/secret_storage.hpp"

namespace takosumi::controlplane {
namespace {

namespace json = boost::json;

// Names beside the sealed values; no sealed text for an empty set.
Result<CapsuleSecretsRecord> seal_sensitive(SecretMap values, const Keyring& keys) {
  CapsuleSecretsRecord record;
  for (const auto& [name, value] : values) record.sensitive_variable_names.push_back(name);
  if (values.empty()) return record;
  protocol::SecretBundle bundle;
  bundle.sensitive_variables = std::move(values);
  auto sealed = seal_for_storage(bundle, keys);
  if (!sealed) return std::unexpected(sealed.error().with_context("sensitiveVariables"));
  record.sealed_sensitive_variables = std::move(*sealed);
  return record;
}

}  // namespace

HttpResponse CapsuleApi::set_capsule_connections(const HttpRequest& req,
                                                const std::string& capsule_id) {
  auto body = parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  if (auto known = check_known_fields(*body, {"connections"}); !known)
    return error_response(known.error());
  auto ids = parse_connection_ids(*body);
  if (!ids) return error_response(ids.error());
  if (!*ids)
    return error_response(Error{std::string(errc::kInvalidArgument), "field \"connections\" is required"});
  auto capsule = d_.catalog.get_capsule(capsule_id);
  if (!capsule) return error_response(capsule.error());
  if (auto ok = check_assignable(capsule->workspace_id, **ids); !ok) return error_response(ok.error());
  auto updated = in_transaction(d_.db, [&]() -> Result<Capsule> {
    TAKOSUMI_TRY(d_.catalog.set_connections(capsule_id, **ids));
    TAKOSUMI_TRY(d_.audit.record(capsule_event(actor(req), "capsule.connections_set", *capsule,
                                               {{"connections", string_array(**ids)}})));
    return d_.catalog.get_capsule(capsule_id);
  });
  if (!updated) return error_response(updated.error());
  return capsule_response(d_, 200, *updated);
}

HttpResponse CapsuleApi::set_sensitive_variables(const HttpRequest& req,
                                                const std::string& capsule_id) {
  auto body = parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  auto values = take_sensitive_variables(*body);
  if (!values) return error_response(values.error());
  // After the values are taken (and wiped from the body), so a refusal leaves no copy behind.
  if (auto known = check_known_fields(*body, {"sensitiveVariables"}); !known)
    return error_response(known.error());
  if (!*values)
    return error_response(Error{std::string(errc::kInvalidArgument),
                                "field \"sensitiveVariables\" is required"});
  auto capsule = d_.catalog.get_capsule(capsule_id);
  if (!capsule) return error_response(capsule.error());
  if (auto ok = check_no_plain_twin(**values, capsule->variables); !ok)
    return error_response(ok.error());
  // A Dependency's value would win over the secret (tofu reads the tfvars file after the
  // environment): a name is either one or the other.
  auto dependencies = d_.dependencies.as_consumer(capsule_id);
  if (!dependencies) return error_response(dependencies.error());
  for (const auto& d : *dependencies)
    for (const auto& [name, unused] : **values)
      if (d.outputs.contains(name))
        return error_response(Error{
            std::string(errc::kInvalidArgument),
            "sensitiveVariables." + name + " is set by dependency " + d.id + " (from capsule " +
                d.producer_capsule_id + "); a variable has one source"});
  auto record = seal_sensitive(std::move(**values), d_.keys);
  if (!record) return error_response(record.error());
  auto updated = in_transaction(d_.db, [&]() -> Result<Capsule> {
    TAKOSUMI_TRY(d_.catalog.set_sensitive_variables(capsule_id, record->sensitive_variable_names,
                                                    record->sealed_sensitive_variables));
    TAKOSUMI_TRY(d_.audit.record(
        capsule_event(actor(req), "capsule.sensitive_variables_set", *capsule,
                      {{"names", string_array(record->sensitive_variable_names)}})));
    return d_.catalog.get_capsule(capsule_id);
  });
  if (!updated) return error_response(updated.error());
  return capsule_response(d_, 200, *updated);
}

Result<CapsuleSecretsRecord> CapsuleApi::capsule_secrets(
    json::object& body, std::string_view workspace_id,
    const protocol::Variables& variables) {
  auto values = take_sensitive_variables(body);
  if (!values) return std::unexpected(values.error());
  auto ids = parse_connection_ids(body);
  if (!ids) return std::unexpected(ids.error());
  if (!*values && !*ids) return CapsuleSecretsRecord{};
  TAKOSUMI_TRY(d_.catalog.get_workspace(workspace_id));
  CapsuleSecretsRecord record;
  if (*values) {
    TAKOSUMI_TRY(check_no_plain_twin(**values, variables));
    auto sealed = seal_sensitive(std::move(**values), d_.keys);
    if (!sealed) return sealed;
    record = std::move(*sealed);
  }
  if (*ids) {
    TAKOSUMI_TRY(check_assignable(workspace_id, **ids));
    record.connection_ids = std::move(**ids);
  }
  return record;
}

Status CapsuleApi::check_assignable(std::string_view workspace_id,
                                   const std::vector<std::string>& ids) {
  std::vector<Connection> connections;
  for (const auto& id : ids) {
    auto c = d_.connections.get(id);
    // An unknown id is refused as another Workspace's is (connection_spec.cpp): no probing.
    if (!c && c.error().code == errc::kNotFound)
      return fail(errc::kInvalidArgument, foreign_connection_message(id, workspace_id));
    if (!c) return std::unexpected(c.error());
    connections.push_back(std::move(*c));
  }
  return check_assignment(workspace_id, connections, d_.clock.now_unix());
}

}  // namespace takosumi::controlplane
