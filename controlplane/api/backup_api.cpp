#include "controlplane/api/backup_api.hpp"

#include "common/error_codes.hpp"
#include "common/file_io.hpp"
#include "controlplane/api/api_json.hpp"
#include "controlplane/api/state_transfer.hpp"
#include "controlplane/api/workspace_backup.hpp"
#include "common/json_fields.hpp"
#include "common/strict_json.hpp"
#include "protocol/signed_document.hpp"

namespace takosumi::controlplane {
namespace {

namespace json = boost::json;

json::object to_json(const Backup& b) {
  return json::object{{"id", b.id},         {"workspaceId", b.workspace_id},
                      {"origin", b.origin}, {"createdBy", b.created_by},
                      {"createdAt", time_value(b.created_at)}, {"sha256", b.sha256},
                      {"size", b.size}};
}

}  // namespace

void BackupApi::register_routes(Router& r, const PublicRouteAccess& a) {
  r.add("POST", "/api/v1/workspaces/{}/backups", a.none({Role::owner, Scope::workspace}),
        [this](auto& req, auto& p) { return create_backup(req, p[0]); });
  r.add("GET", "/api/v1/workspaces/{}/backups", a.none({Role::viewer, Scope::workspace}),
        [this](auto&, auto& p) { return list_backups(p[0]); });
  r.add("GET", "/api/v1/backups/{}", a.none({Role::viewer, Scope::backup}),
        [this](auto&, auto& p) { return download_backup(p[0]); });
  r.add("GET", "/api/v1/workspaces/{}/backups/{}", a.none({Role::viewer, Scope::workspace}),
        [this](auto&, auto& p) { return download_backup(p[1], p[0]); });
  // The document is the body, streamed to a file like an artifact; the key in a header.
  r.add("POST", "/api/v1/workspaces/restore", a.file_body({Role::owner, Scope::admin}),
        [this](auto& req, auto&) { return restore(req); });
  // State leaves only for a key the admin names (whoever holds its private half can read the
  // state), and comes in only from a key the admin trusts: both take the admin token.
  r.add("POST", "/api/v1/workspaces/{}/state-transfers", a.json_body({Role::owner, Scope::admin}),
        [this](auto& req, auto& p) { return export_state(req, p[0]); });
  r.add("POST", "/api/v1/workspaces/{}/state-transfers/import",
        a.file_body({Role::owner, Scope::admin}),
        [this](auto& req, auto& p) { return import_state(req, p[0]); });
  r.add("POST", "/api/v1/capsules/{}/start-without-state", a.none({Role::owner, Scope::capsule}),
        [this](auto& req, auto& p) { return start_without_state(req, p[0]); });
}

HttpResponse BackupApi::create_backup(const HttpRequest& req, const std::string& workspace_id) {
  auto ws = d_.catalog.get_workspace(workspace_id);
  if (!ws) return error_response(ws.error());
  std::string document;
  auto backup = in_transaction(d_.db, [&]() -> Result<Backup> {
    // Read in the transaction: one consistent moment of the Workspace.
    auto payload = backup_payload(d_, *ws, d_.clock.now_unix());
    if (!payload) return std::unexpected(payload.error());
    document = protocol::to_text(protocol::sign_document(
        std::string(kBackupFormat), kBackupVersion, std::move(*payload), d_.keys.signing_key()));
    if (document.size() > kMaxBackupBytes)
      return fail(errc::kPayloadTooLarge,
                  "the backup of workspace " + workspace_id + " would take " +
                      std::to_string(document.size()) + " bytes, more than " +
                      std::to_string(kMaxBackupBytes));
    auto sha256 = d_.blobs.put(document);
    if (!sha256) return std::unexpected(sha256.error());
    auto created = d_.backups.create(Backup{.workspace_id = workspace_id, .origin = "created",
                                            .created_by = actor(req), .sha256 = *sha256,
                                            .size = static_cast<std::int64_t>(document.size())});
    if (!created) return created;
    AuditEvent e{.actor = actor(req), .action = "workspace.backed_up", .workspace_id = workspace_id};
    e.detail = {{"backupId", created->id}, {"sha256", created->sha256}};
    TAKOSUMI_TRY(d_.audit.record(std::move(e)));
    return created;
  });
  if (!backup) return error_response(backup.error());
  // The record and the signed document itself (what GET …/backups/{id} downloads, byte for byte,
  // and `takosumi-control restore` takes).
  json::object out = to_json(*backup);
  out["document"] = json::parse(document);
  return json_response(201, out);
}

HttpResponse BackupApi::list_backups(const std::string& workspace_id) {
  if (auto ws = d_.catalog.get_workspace(workspace_id); !ws) return error_response(ws.error());
  auto all = d_.backups.list(workspace_id);
  if (!all) return error_response(all.error());
  json::array out;
  for (const auto& b : *all) out.push_back(to_json(b));
  return json_response(200, json::object{{"backups", std::move(out)}});
}

HttpResponse BackupApi::download_backup(const std::string& id,
                                        std::optional<std::string> workspace_id) {
  auto backup = d_.backups.get(id);
  if (!backup) return error_response(backup.error());
  // Under a Workspace's path, only that Workspace's backups (the caller's role is on that one).
  if (workspace_id && backup->workspace_id != *workspace_id)
    return error_response(Error{std::string(errc::kNotFound), "backup " + id + " not found"});
  auto path = d_.blobs.path_for(backup->sha256);
  if (!path) return error_response(path.error());
  // Streamed from the blob: the document is the file, byte for byte (its digest is the name).
  return HttpResponse{200, "application/json", "", *path, {}};
}

Result<BackupApi::SourceDocument> BackupApi::source_document(const HttpRequest& req) {
  auto key_text = req.header("x-takosumi-source-key");
  if (!key_text)
    return fail(errc::kInvalidArgument,
                "header X-Takosumi-Source-Key is required: the source control plane's public "
                "signing key (base64, its keys/signing.pub)");
  if (req.body_file.empty()) return fail(errc::kInvalidArgument, "the signed document is missing");
  auto text = read_file(req.body_file, kMaxBackupBytes);
  if (!text) return std::unexpected(text.error());
  return SourceDocument{std::move(*text), std::string(*key_text)};
}

Result<json::object> BackupApi::signed_body(const HttpRequest& req, std::string_view format,
                                            std::int64_t version) {
  auto document = source_document(req);
  if (!document) return std::unexpected(document.error());
  auto key = crypto::SignPublicKey::from_base64(document->source_key);
  if (!key)
    return fail(errc::kInvalidArgument, "header X-Takosumi-Source-Key must be the base64 of 32 bytes");
  return protocol::open_signed_document(document->text, kMaxBackupBytes, format, version, *key);
}

HttpResponse BackupApi::export_state(const HttpRequest& req, const std::string& workspace_id) {
  auto body = parse_object(req.body, kMaxJsonBody);
  if (!body) return error_response(body.error());
  if (auto known = check_known_fields(*body, {"destinationStoragePublicKey"}); !known)
    return error_response(known.error());
  auto key_text = get_string(*body, "destinationStoragePublicKey", 64);
  if (!key_text) return error_response(key_text.error());
  auto to = crypto::BoxPublicKey::from_base64(*key_text);
  if (!to)
    return error_response(Error{std::string(errc::kInvalidArgument),
                                "destinationStoragePublicKey must be the base64 of 32 bytes: the "
                                "destination control plane's keys/storage.pub"});
  auto ws = d_.catalog.get_workspace(workspace_id);
  if (!ws) return error_response(ws.error());
  auto document = in_transaction(d_.db, [&]() -> Result<std::string> {
    auto payload = state_transfer_payload(d_, *ws, *to, d_.clock.now_unix());
    if (!payload) return std::unexpected(payload.error());
    AuditEvent e{.actor = actor(req), .action = "workspace.state_exported",
                 .workspace_id = workspace_id};
    e.detail = {{"destinationStoragePublicKey", to->to_base64()}};
    TAKOSUMI_TRY(d_.audit.record(std::move(e)));
    std::string text = protocol::to_text(protocol::sign_document(
        std::string(kStateTransferFormat), kStateTransferVersion, std::move(*payload),
        d_.keys.signing_key()));
    // What the destination reads at most (base64 and records make it larger than the state).
    if (text.size() > kMaxBackupBytes)
      return fail(errc::kPayloadTooLarge, "the state transfer of workspace " + workspace_id +
                                              " takes " + std::to_string(text.size()) +
                                              " bytes, more than " +
                                              std::to_string(kMaxBackupBytes));
    return text;
  });
  if (!document) return error_response(document.error());
  return HttpResponse{200, "application/json", std::move(*document), {}, {}};
}

HttpResponse BackupApi::import_state(const HttpRequest& req, const std::string& workspace_id) {
  auto payload = signed_body(req, kStateTransferFormat, kStateTransferVersion);
  if (!payload) return error_response(payload.error());
  auto imported = in_transaction(d_.db, [&]() -> Result<ImportOutcome> {
    auto outcome = import_state_transfer(d_, workspace_id, *payload);
    if (!outcome) return outcome;
    if (!outcome->state_version_ids.empty()) {
      AuditEvent e{.actor = actor(req), .action = "workspace.state_imported",
                   .workspace_id = workspace_id};
      e.detail = {{"stateVersionIds", string_array(outcome->state_version_ids)}};
      TAKOSUMI_TRY(d_.audit.record(std::move(e)));
    }
    return outcome;
  });
  if (!imported) return error_response(imported.error());
  return json_response(200, json::object{{"stateVersionIds", string_array(imported->state_version_ids)},
                                         {"alreadyPresent", imported->already_present}});
}

HttpResponse BackupApi::start_without_state(const HttpRequest& req,
                                            const std::string& capsule_id) {
  auto capsule = d_.catalog.get_capsule(capsule_id);
  if (!capsule) return error_response(capsule.error());
  auto done = in_transaction(d_.db, [&]() -> Status {
    if (!capsule->state_pending) return {};  // nothing to waive
    TAKOSUMI_TRY(d_.catalog.set_state_pending(capsule_id, false));
    return d_.audit.record(capsule_event(actor(req), "capsule.started_without_state", *capsule));
  });
  if (!done) return error_response(done.error());
  return capsule_response(d_, 200, *d_.catalog.get_capsule(capsule_id));
}

HttpResponse BackupApi::restore(const HttpRequest& req) {
  auto document = source_document(req);
  if (!document) return error_response(document.error());
  auto restored = restore_workspace(d_, document->text, document->source_key, actor(req));
  if (!restored) return error_response(restored.error());
  return json_response(201, *restored);
}

}  // namespace takosumi::controlplane
