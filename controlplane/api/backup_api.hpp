#pragma once
// The public API's backups (docs/backup-and-restore.md): a Workspace's control information as a
// signed document (created by an owner, listed and downloaded by a viewer), and the restore of
// such a document into this control plane (the admin, with the source's public signing key).
#include <optional>
#include <string>

#include "controlplane/api/public_resource.hpp"

namespace takosumi::controlplane {

class BackupApi : public PublicResource {
 public:
  using PublicResource::PublicResource;
  // Routes capture `this`: the BackupApi must outlive the router.
  void register_routes(Router& r, const PublicRouteAccess& access);

 private:
  HttpResponse create_backup(const HttpRequest& req, const std::string& workspace_id);
  HttpResponse list_backups(const std::string& workspace_id);
  HttpResponse download_backup(const std::string& id,
                               std::optional<std::string> workspace_id = std::nullopt);
  HttpResponse restore(const HttpRequest& req);
  HttpResponse export_state(const HttpRequest& req, const std::string& workspace_id);
  HttpResponse import_state(const HttpRequest& req, const std::string& workspace_id);
  HttpResponse start_without_state(const HttpRequest& req, const std::string& capsule_id);
  struct SourceDocument {
    std::string text;        // as the source wrote it
    std::string source_key;  // the X-Takosumi-Source-Key header: base64 of its signing.pub
  };
  // The signed document in the request's body and the key its header names, unverified.
  static Result<SourceDocument> source_document(const HttpRequest& req);
  // The verified payload of a signed document in the request's body, of the key in its
  // X-Takosumi-Source-Key header.
  static Result<boost::json::object> signed_body(const HttpRequest& req, std::string_view format,
                                                 std::int64_t version);
};

}  // namespace takosumi::controlplane
