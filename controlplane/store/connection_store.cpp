#include "controlplane/store/connection_store.hpp"

#include "common/error_codes.hpp"
#include "common/json_fields.hpp"
#include "controlplane/store/keys/secret_storage.hpp"
#include "controlplane/store/db/stored_names.hpp"
#include "crypto/random_ids.hpp"
#include "common/failure_codes.hpp"

namespace takosumi::controlplane {
namespace {

namespace json = boost::json;

constexpr std::string_view kSelect =
    "SELECT id, workspace_id, name, kind, provider, auth_mode, credential_names, created_at,"
    " expires_at, revoked_at FROM connections";

Result<Connection> connection_from_row(const Statement& s) {
  Connection c;
  std::string auth_mode;
  std::string names_text;
  ColumnReader(s) >> c.id >> c.workspace_id >> c.name >> c.kind >> c.provider >> auth_mode >> names_text >>
      c.created_at >> c.expires_at >> c.revoked_at;
  c.auth_mode = protocol::auth_mode_from_string(auth_mode).value_or(protocol::AuthMode::env);
  auto names = names_from_text(names_text);
  if (!names)
    return fail(errc::kInternal, "connection " + c.id + ": stored credential names are corrupt");
  c.credential_names = std::move(*names);
  return c;
}

}  // namespace

Result<Connection> ConnectionStore::create(ConnectionRequest req) {
  Connection c;
  c.id = crypto::new_id("conn");
  c.workspace_id = req.workspace_id;
  c.name = req.name;
  c.kind = req.kind;
  c.provider = req.provider;
  c.auth_mode = req.auth_mode;
  c.created_at = clock_.now_unix();
  c.expires_at = req.expires_at;
  for (const auto& [name, value] : req.values) c.credential_names.push_back(name);  // sorted
  const std::string names = names_to_text(c.credential_names);
  protocol::SecretBundle bundle;
  if (c.kind == connection_kind::kGit) {
    auto credential = protocol::git_credential_from_values(c.id, req.values);
    if (!credential) return std::unexpected(credential.error());
    bundle.source = std::move(*credential);
  } else {
    bundle.connections.push_back({c.id, c.name, c.provider, c.auth_mode, std::move(req.values)});
  }
  auto sealed = seal_for_storage(bundle, keys_);
  if (!sealed) return std::unexpected(sealed.error());
  auto st = db_.run(
      "INSERT INTO connections (id, workspace_id, name, kind, provider, auth_mode, credential_names,"
      " sealed_values, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      c.id, c.workspace_id, c.name, c.kind, c.provider, protocol::to_string(c.auth_mode), names,
      *sealed, c.created_at, c.expires_at);
  if (!st && st.error().code == errc::kConflict)
    return fail(errc::kConflict, "connection \"" + c.name + "\" already exists in this workspace");
  if (!st) return std::unexpected(st.error());
  return c;
}

Result<Connection> ConnectionStore::get(std::string_view id) {
  return one_row(db_.query(std::string(kSelect) + " WHERE id = ?", id),
                 "connection " + std::string(id), connection_from_row);
}

Result<std::vector<Connection>> ConnectionStore::list(std::string_view workspace_id) {
  return collect(
      db_.query(std::string(kSelect) + " WHERE workspace_id = ? ORDER BY created_at, rowid",
                workspace_id),
      connection_from_row);
}

Result<std::vector<Connection>> ConnectionStore::get_many(const std::vector<std::string>& ids) {
  std::vector<Connection> out;
  for (const auto& id : ids) {
    auto c = get(id);
    if (!c) return std::unexpected(c.error());
    out.push_back(std::move(*c));
  }
  return out;
}

Result<Connection> ConnectionStore::revoke(std::string_view id) {
  TAKOSUMI_TRY(get(id));
  TAKOSUMI_TRY(db_.run("UPDATE connections SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                       clock_.now_unix(), id));
  return get(id);
}

Result<std::optional<ConnectionRefusal>> ConnectionStore::first_unusable(const Capsule& capsule) {
  auto connections = get_many(capsule.connection_ids);
  if (!connections) return std::unexpected(connections.error());
  const std::int64_t now = clock_.now_unix();
  if (capsule.source.connection_id) {
    auto source = get(*capsule.source.connection_id);
    if (!source) return std::unexpected(source.error());
    if (auto why = connection_unusable(*source, now)) {
      why->message += "; give capsule " + capsule.id + " an active Connection of kind git as "
                      "source.connection";
      return std::optional<ConnectionRefusal>(ConnectionRefusal{source->id, std::move(*why)});
    }
  }
  for (const auto& c : *connections) {
    auto why = connection_unusable(c, now);
    if (!why) continue;
    why->message += "; assign an active Connection to capsule " + capsule.id +
                    " (PUT /api/v1/capsules/" + capsule.id + "/connections)";
    return std::optional<ConnectionRefusal>(ConnectionRefusal{c.id, std::move(*why)});
  }
  return std::optional<ConnectionRefusal>{};
}

Result<protocol::SecretBundle> ConnectionStore::open_sealed(const Connection& connection) {
  auto sealed = one_row(
      db_.query("SELECT sealed_values FROM connections WHERE id = ?", connection.id),
      "connection " + connection.id,
      [](const Statement& s) { return s.text(0); });
  if (!sealed) return std::unexpected(sealed.error());
  return with_context(open_from_storage(*sealed, keys_), "connection " + connection.id);
}

Result<protocol::GitCredential> ConnectionStore::open_git(const Connection& connection) {
  if (connection.kind != connection_kind::kGit)
    return fail(errc::kInvalidArgument, "connection " + connection.id + " is not of kind git");
  auto bundle = open_sealed(connection);
  if (!bundle) return std::unexpected(bundle.error());
  if (!bundle->source || bundle->source->connection_id != connection.id)
    return fail(errc::kStateIntegrityFailed,
                "connection " + connection.id + ": the sealed values belong to another Connection");
  return std::move(*bundle->source);
}

Result<protocol::ConnectionSecret> ConnectionStore::open(const Connection& connection) {
  auto bundle = open_sealed(connection);
  if (!bundle) return std::unexpected(bundle.error());
  // The sealed text carries its Connection's id: a sealed value copied onto another row is refused.
  if (bundle->connections.size() != 1 || bundle->connections.front().id != connection.id)
    return fail(errc::kStateIntegrityFailed,
                "connection " + connection.id + ": the sealed values belong to another Connection");
  return std::move(bundle->connections.front());
}

}  // namespace takosumi::controlplane
